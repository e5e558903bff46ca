/**
 * A transcript as a model reads it: one sentence per line with its start and
 * end in the source ("[1:02.5-1:06.0] text"), optionally only the sentences
 * that overlap a span, so a long video's transcript can be read in parts.
 */
import type { Transcript, TranscriptSentence } from "#contract";

/** 62.5 -> "1:02.5"; 3725 -> "1:02:05.0" */
export function clockTime(seconds: number): string {
  const tenths = Math.max(0, Math.round(seconds * 10));
  const hours = Math.floor(tenths / 36_000);
  const minutes = Math.floor((tenths % 36_000) / 600);
  const rest = ((tenths % 600) / 10).toFixed(1).padStart(4, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
}

export interface Span {
  from?: number;
  to?: number;
}

/** The sentences that overlap the span (all of them without one), with empty ones left out. */
export function sentencesIn(transcript: Transcript, span: Span): TranscriptSentence[] {
  return transcript.sentences.filter(
    (s) => s.text.trim().length > 0 && (span.from === undefined || s.end > span.from) && (span.to === undefined || s.start < span.to),
  );
}

export function timedText(sentences: readonly TranscriptSentence[]): string {
  return sentences
    .map((s) => `[${clockTime(s.start)}-${clockTime(s.end)}] ${s.speaker ? `${s.speaker}: ` : ""}${s.text.replace(/\s+/g, " ").trim()}`)
    .join("\n");
}
