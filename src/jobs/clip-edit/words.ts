/**
 * A clip's caption words: the job's stored transcript over the clip's span,
 * with the clip's corrections applied. A word belongs to a span when it
 * starts inside it (start <= word.start < end). Corrections are kept by the
 * word's source start time, so a correction survives a later change of span
 * (the word is still the one that starts there).
 */
import type { EditWord, TimeRange, Transcript, TranscriptSentence } from "#contract";
import type { StoredCorrection } from "../../db/clips.ts";
import { DomainError } from "../../domain/errors.ts";
import { SNAP_WINDOW_SECONDS, type WordCorrection } from "./contract.ts";

/** A correction by time names the word starting within this of it. */
const TIME_TOLERANCE_SECONDS = 0.05;

function sameTime(a: number, b: number): boolean {
  return Math.abs(a - b) <= TIME_TOLERANCE_SECONDS;
}

/** The span's words, corrected, in source times. */
export function spanWords(transcript: Transcript | null, start: number, end: number, corrections: readonly StoredCorrection[]): EditWord[] {
  if (!transcript) return [];
  return transcript.words
    .filter((word) => word.start >= start && word.start < end)
    .map((word) => {
      const fix = corrections.find((c) => sameTime(c.start, word.start));
      const text = (fix?.text ?? word.text).trim() || word.text;
      return { text: text.slice(0, 60), start: word.start, end: Math.max(word.start, word.end), ...(word.speaker ? { speaker: word.speaker } : {}) };
    })
    .filter((word) => word.text.length > 0);
}

/**
 * The parts of [start, end] the job did not transcribe: outside its
 * time_range (a job without one transcribed the whole source). The engine
 * hears them for the edit (ClipEdit.transcribe).
 */
export function untranscribedParts(timeRange: TimeRange | null, start: number, end: number): { start: number; end: number }[] {
  if (!timeRange) return [];
  const parts = [
    { start, end: Math.min(end, timeRange.start_seconds) },
    { start: Math.max(start, timeRange.end_seconds), end },
  ];
  return parts.filter((p) => p.end > p.start);
}

function invalidWord(detail: string, path: string): DomainError {
  return new DomainError("invalid_word", detail, { errors: [{ path, message: detail }] });
}

/**
 * The clip's corrections after this edit's: each new one is resolved to a
 * word's start time, by its index in `current` (the clip's words as GET
 * shows them) or by its time (a word of the transcript starting there).
 * 400 invalid_word for an index out of range or a time with no word.
 */
export function mergeCorrections(
  kept: readonly StoredCorrection[],
  fixes: readonly WordCorrection[],
  current: readonly EditWord[],
  transcript: Transcript | null,
): StoredCorrection[] {
  const merged = [...kept];
  fixes.forEach((fix, i) => {
    let start: number;
    if ("index" in fix) {
      const word = current[fix.index];
      if (!word) throw invalidWord(`Word ${fix.index} is out of range: the clip has ${current.length} words (GET the clip: words).`, `words.${i}.index`);
      start = word.start;
    } else {
      const word = transcript?.words.find((w) => sameTime(w.start, fix.start_seconds));
      if (!word) throw invalidWord(`No word starts at ${fix.start_seconds} s (within ${TIME_TOLERANCE_SECONDS} s).`, `words.${i}.start_seconds`);
      start = word.start;
    }
    const at = merged.findIndex((c) => sameTime(c.start, start));
    if (at >= 0) merged.splice(at, 1);
    merged.push({ start, text: fix.text });
  });
  return merged.sort((a, b) => a.start - b.start);
}

function nearest(times: readonly number[], to: number): number {
  let best = to;
  let distance = SNAP_WINDOW_SECONDS + 1e-9;
  for (const time of times) {
    const d = Math.abs(time - to);
    if (d <= distance) {
      best = time;
      distance = d;
    }
  }
  return best;
}

/** `snap: true`: each edge moves to the nearest sentence boundary within SNAP_WINDOW_SECONDS (start to a start, end to an end). */
export function snapSpan(sentences: readonly TranscriptSentence[], start: number, end: number): { start: number; end: number } {
  return { start: nearest(sentences.map((s) => s.start), start), end: nearest(sentences.map((s) => s.end), end) };
}
