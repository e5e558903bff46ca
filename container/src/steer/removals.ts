/**
 * What one clip has cut out of it, in source seconds: pauses
 * longer than the mode's threshold shortened to its `keep` (half of it left
 * on each side), and filler words ("um", "uh", ...) cut by their transcript
 * times. A filler and the pauses touching it count as one gap, so cutting
 * "so... um... the" leaves one short pause, not two. Pauses come from the
 * analysis (voice activity, or loudness and silence), so no cut ever falls
 * inside speech; the kept pieces are what the render concatenates.
 */
import type { RemoveSilence, RemovedSpan, TranscriptWord } from "#contract";
import { round3 } from "../shared/round.ts";

export interface Interval {
  start: number;
  end: number;
}

/** Pauses longer than `over` seconds become `keep` seconds long. */
export const SILENCE_MODES: Record<Exclude<RemoveSilence, "off">, { over: number; keep: number }> = {
  pauses: { over: 0.8, keep: 0.4 },
  tight: { over: 0.35, keep: 0.15 },
};
/** With silence removal off, the gap a cut filler leaves is shortened to this at most. */
const FILLER_GAP_KEEP = 0.25;
/** Kept pieces shorter than this are dropped with the cuts around them (the crossfade needs room). */
export const MIN_PIECE_SECONDS = 0.12;
/** Pauses and fillers closer than this are one gap. */
const JOIN_SECONDS = 0.05;

/** Filler words of English and a few other languages, spelled as transcripts write them. */
const FILLERS = new Set([
  "um", "umm", "ummm", "uh", "uhh", "uhm", "uhmm", "erm", "er", "err", "ah", "ahh", "hmm", "hm", "mm", "mmm", "eh",
  "euh", "heu", "ähm", "äh", "öhm", "ehm", "eeh", "este", "mhm",
]);

export function isFiller(text: string): boolean {
  return FILLERS.has(text.toLowerCase().replace(/[^\p{L}]/gu, ""));
}

export interface RemovalPlan {
  removed: RemovedSpan[];
  /** The source seconds kept, in order: [start, end] with the removed spans taken out. */
  kept: Interval[];
}

/** Nothing removed: the whole clip is one piece. */
export function noRemovals(start: number, end: number): RemovalPlan {
  return { removed: [], kept: [{ start, end }] };
}

export function planRemovals(opts: {
  start: number;
  end: number;
  silence: RemoveSilence;
  fillers: boolean;
  /** Pauses of the source (analysis), any order. */
  pauses: Interval[];
  words: TranscriptWord[];
}): RemovalPlan {
  const { start, end } = opts;
  const mode = opts.silence === "off" ? null : SILENCE_MODES[opts.silence];
  const fillerWords = opts.fillers
    ? opts.words.filter((w) => isFiller(w.text) && w.start >= start && w.end <= end && w.end > w.start).map((w) => ({ start: w.start, end: w.end }))
    : [];
  if (!mode && fillerWords.length === 0) return noRemovals(start, end);
  const inside = (iv: Interval) => ({ start: Math.max(start, iv.start), end: Math.min(end, iv.end) });
  const pauses = opts.pauses.map(inside).filter((p) => p.end - p.start > 0);

  // Gaps: fillers joined with the pauses that touch them, and (with a mode) the long pauses alone.
  const pieces = [...fillerWords.map((f) => ({ ...f, filler: true })), ...pauses.map((p) => ({ ...p, filler: false }))].sort((a, b) => a.start - b.start);
  const gaps: { start: number; end: number; fillers: Interval[] }[] = [];
  for (const piece of pieces) {
    const last = gaps.at(-1);
    if (last && piece.start <= last.end + JOIN_SECONDS) {
      last.end = Math.max(last.end, piece.end);
      if (piece.filler) last.fillers.push(piece);
    } else {
      gaps.push({ start: piece.start, end: piece.end, fillers: piece.filler ? [piece] : [] });
    }
  }

  const removed: RemovedSpan[] = [];
  for (const gap of gaps) {
    const hasFiller = gap.fillers.length > 0;
    if (!hasFiller && (!mode || gap.end - gap.start <= mode.over)) continue;
    const keep = mode ? mode.keep : FILLER_GAP_KEEP;
    // A gap at the clip's edge keeps all of its share on the inner side only.
    const atStart = gap.start <= start + 1e-6;
    const atEnd = gap.end >= end - 1e-6;
    const length = gap.end - gap.start;
    if (length <= keep) {
      // Shorter than what is kept: only the filler words themselves go.
      for (const f of gap.fillers) removed.push({ start_seconds: f.start, end_seconds: f.end, kind: "filler" });
      continue;
    }
    const cutFrom = atStart ? gap.start : atEnd ? gap.start + keep : gap.start + keep / 2;
    const cutTo = atStart ? gap.end - keep : atEnd ? gap.end : gap.end - keep / 2;
    if (cutTo - cutFrom <= 0) continue;
    // Report the fillers as fillers and the rest of the cut as silence.
    let at = cutFrom;
    for (const f of gap.fillers) {
      const fs = Math.max(cutFrom, f.start);
      const fe = Math.min(cutTo, f.end);
      if (fe <= fs) continue;
      if (fs > at) removed.push({ start_seconds: at, end_seconds: fs, kind: "silence" });
      removed.push({ start_seconds: fs, end_seconds: fe, kind: "filler" });
      at = fe;
    }
    if (cutTo > at) removed.push({ start_seconds: at, end_seconds: cutTo, kind: "silence" });
  }
  return withPieces(start, end, removed);
}

/** Kept pieces from the removed spans; a piece too short to keep goes with its neighbours. */
function withPieces(start: number, end: number, spans: RemovedSpan[]): RemovalPlan {
  const removed = [...spans].sort((a, b) => a.start_seconds - b.start_seconds);
  const kept: Interval[] = [];
  let at = start;
  const out: RemovedSpan[] = [];
  for (const span of removed) {
    if (span.start_seconds > at) kept.push({ start: at, end: span.start_seconds });
    out.push(span);
    at = Math.max(at, span.end_seconds);
  }
  if (end > at) kept.push({ start: at, end });
  const pieces = kept.filter((k) => k.end - k.start >= MIN_PIECE_SECONDS);
  if (pieces.length === 0) return noRemovals(start, end);
  // Slivers dropped between cuts are removed too, and reported as silence.
  const dropped = kept.filter((k) => k.end - k.start < MIN_PIECE_SECONDS);
  for (const d of dropped) out.push({ start_seconds: d.start, end_seconds: d.end, kind: "silence" });
  out.sort((a, b) => a.start_seconds - b.start_seconds);
  return { removed: mergeSpans(out), kept: pieces };
}

/** Adjacent spans of the same kind become one. */
function mergeSpans(spans: RemovedSpan[]): RemovedSpan[] {
  const out: RemovedSpan[] = [];
  for (const s of spans) {
    const last = out.at(-1);
    if (last && last.kind === s.kind && s.start_seconds <= last.end_seconds + 1e-6) last.end_seconds = Math.max(last.end_seconds, s.end_seconds);
    else out.push({ ...s });
  }
  return out.map((s) => ({ start_seconds: round3(s.start_seconds), end_seconds: round3(s.end_seconds), kind: s.kind }));
}

/** Seconds of output the plan leaves. */
export function keptSeconds(plan: RemovalPlan): number {
  return plan.kept.reduce((sum, k) => sum + (k.end - k.start), 0);
}

/**
 * Source seconds -> seconds of the rendered clip. A time inside a removed
 * span lands on the cut (so a word's edge next to a cut stays on screen).
 */
export function toClipTime(plan: RemovalPlan, t: number): number {
  let out = 0;
  for (const piece of plan.kept) {
    if (t <= piece.start) return out;
    if (t < piece.end) return out + (t - piece.start);
    out += piece.end - piece.start;
  }
  return out;
}
