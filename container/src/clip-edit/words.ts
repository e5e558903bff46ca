/**
 * A clip edit's words as the engine's transcript: the Worker sends the
 * span's words already corrected, and they are all the engine knows of the
 * speech (no speech-to-text, no analysis). Sentences, pauses and speech
 * spans are derived from them here.
 */
import type { ClipEdit, Transcript, TranscriptWord } from "#contract";
import { buildTranscript } from "../transcript/build.ts";
import type { Interval } from "../steer/removals.ts";

/** The words in time order, as a transcript (null when the job had none). */
export function editTranscript(edit: Pick<ClipEdit, "words">, language: string | null): Transcript | null {
  if (edit.words.length === 0) return null;
  const words: TranscriptWord[] = [...edit.words]
    .filter((w) => w.end >= w.start)
    .sort((a, b) => a.start - b.start)
    .map((w) => ({ text: w.text, start: w.start, end: w.end, ...(w.speaker ? { speaker: w.speaker } : {}) }));
  // The source is a label only: the report of an edit carries no transcript summary.
  return words.length > 0 ? buildTranscript("captions_url", language, words) : null;
}

/** Where speech is: the words' spans, touching ones merged (framing watches mouths there). */
export function speechFromWords(words: readonly TranscriptWord[]): Interval[] {
  const spans: Interval[] = [];
  for (const w of words) {
    const last = spans.at(-1);
    if (last && w.start <= last.end) last.end = Math.max(last.end, w.end);
    else spans.push({ start: w.start, end: w.end });
  }
  return spans;
}

/** Pauses inside [start, end]: the gaps between the words (silence removal cuts only there). */
export function pausesBetweenWords(words: readonly TranscriptWord[], start: number, end: number): Interval[] {
  // Without words nothing says where speech is: no pause is cut.
  if (words.length === 0) return [];
  const pauses: Interval[] = [];
  let at = start;
  for (const span of speechFromWords(words)) {
    if (span.start > at) pauses.push({ start: at, end: Math.min(span.start, end) });
    at = Math.max(at, span.end);
    if (at >= end) break;
  }
  if (end > at) pauses.push({ start: at, end });
  return pauses.filter((p) => p.end > p.start);
}
