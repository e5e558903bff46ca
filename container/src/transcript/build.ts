/**
 * Turns timed cues (subtitle files) or timed words (speech-to-text) into the
 * contract's Transcript: words with times, and sentences built from them.
 *
 * Cue files carry no word times, so a cue's span is shared among its words in
 * proportion to their length. Where speakers overlap, a cue starts before the
 * previous one ends: its words follow the previous cue's (they never go back
 * in time), and a short reply wholly inside another cue keeps its length
 * right after it instead of being lost. Such a seam has no gap between the
 * two sentences, as in a subtitle track (which cannot hold overlapping cues
 * and cuts the earlier cue where the next begins), so clip edges never take
 * it for a pause (analyse/sentence-cuts.ts). Rolling captions (each cue
 * repeating the previous cue's last line, as platform auto-captions do) lose
 * the repeated line.
 */
import type { Transcript, TranscriptSentence, TranscriptSource, TranscriptWord } from "#contract";
import type { Cue } from "./cues.ts";
import { round3 } from "../shared/round.ts";

/** A silence this long ends a sentence even without punctuation (auto-captions have none). */
const SENTENCE_GAP_SECONDS = 1.2;
/** Unpunctuated speech is cut into sentences of at most this many seconds. */
const MAX_SENTENCE_SECONDS = 20;
// Latin, CJK, Devanagari (danda) and Arabic-script (question mark, full stop) sentence ends.
const SENTENCE_END = /[.?!…。？！।॥؟۔]["'”’)\]]*$/;

function dropRepeatedLines(cues: Cue[]): Cue[] {
  const out: Cue[] = [];
  let previous = "";
  for (const cue of cues) {
    let text = cue.text;
    if (previous !== "" && text.startsWith(previous) && text.length > previous.length) text = text.slice(previous.length).trim();
    else if (text === previous) continue;
    previous = cue.text;
    out.push({ ...cue, text });
  }
  return out;
}

export function wordsFromCues(cues: Cue[], durationSeconds: number): TranscriptWord[] {
  const words: TranscriptWord[] = [];
  let clock = 0;
  for (const cue of dropRepeatedLines(cues)) {
    const start = Math.max(cue.start, clock);
    // A cue wholly inside the one before (a "Right." over someone's sentence) keeps its own length after it.
    const end = Math.min(cue.end <= clock && cue.start < durationSeconds ? clock + (cue.end - cue.start) : cue.end, durationSeconds);
    if (end <= start) continue;
    const parts = cue.text.split(" ").filter((p) => p !== "");
    const weights = parts.map((p) => p.length + 1);
    const total = weights.reduce((a, b) => a + b, 0);
    let at = start;
    parts.forEach((text, i) => {
      const length = ((end - start) * weights[i]!) / total;
      const word: TranscriptWord = { text, start: round3(at), end: round3(at + length) };
      if (cue.speaker) word.speaker = cue.speaker;
      words.push(word);
      at += length;
    });
    clock = end;
  }
  return words;
}

/** Sentences: punctuation ends one, and so do a long silence or a change of speaker. */
export function sentencesFromWords(words: TranscriptWord[]): TranscriptSentence[] {
  const sentences: TranscriptSentence[] = [];
  let current: TranscriptWord[] = [];
  const close = () => {
    if (current.length === 0) return;
    const first = current[0]!;
    const last = current[current.length - 1]!;
    const sentence: TranscriptSentence = { text: current.map((w) => w.text).join(" "), start: first.start, end: last.end };
    if (first.speaker) sentence.speaker = first.speaker;
    sentences.push(sentence);
    current = [];
  };
  words.forEach((word, i) => {
    const previous = current[current.length - 1];
    if (previous && (word.start - previous.end >= SENTENCE_GAP_SECONDS || word.speaker !== previous.speaker || word.end - current[0]!.start > MAX_SENTENCE_SECONDS)) {
      close();
    }
    current.push(word);
    if (SENTENCE_END.test(word.text) || i === words.length - 1) close();
  });
  return sentences;
}

function normalised(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * Joins chunk transcripts whose audio overlapped: at each seam a word belongs
 * to the chunk whose side of the overlap's middle it falls on, and a word
 * heard by both chunks (same text, overlapping time) is kept once.
 */
export function stitchChunks(chunks: { start: number; end: number; words: TranscriptWord[] }[]): TranscriptWord[] {
  const ordered = [...chunks].sort((a, b) => a.start - b.start);
  const out: TranscriptWord[] = [];
  ordered.forEach((chunk, i) => {
    const previous = ordered[i - 1];
    const next = ordered[i + 1];
    const from = previous && previous.end > chunk.start ? (chunk.start + previous.end) / 2 : -Infinity;
    const to = next && chunk.end > next.start ? (next.start + chunk.end) / 2 : Infinity;
    for (const word of chunk.words) {
      const middle = (word.start + word.end) / 2;
      if (middle < from || middle >= to) continue;
      const last = out[out.length - 1];
      if (last && normalised(last.text) === normalised(word.text) && word.start < last.end + 0.2) continue;
      if (last && word.start < last.start) continue;
      out.push(word);
    }
  });
  return out;
}

export function buildTranscript(source: TranscriptSource, language: string | null, words: TranscriptWord[]): Transcript {
  return { source, language, words, sentences: sentencesFromWords(words) };
}
