/**
 * With a transcript, clip edges move to sentence boundaries: a clip starts
 * just before a sentence begins and ends just after one ends (inside the
 * pause between sentences, never inside a word), within the configured
 * lengths and as close as possible to where the analysis placed it. A clip
 * whose first sentence answers a question just before it starts with the
 * question instead. When no sentence boundaries fit (one very long
 * unpunctuated sentence), word boundaries are used under the same rule; a
 * clip with no words in it, or with no boundary that qualifies, keeps its
 * edges (the analysis placed them in pauses between sentences).
 *
 * An edge goes only where no one is speaking. A boundary is an edge
 * candidate only when
 *   - the speech model ran (`quiet` given): one of its quiet stretches
 *     (vad.ts) reaches within CUE_TOLERANCE_SECONDS of the boundary (cue
 *     times run a little early or late); the edge goes inside that stretch,
 *     at least QUIET_MARGIN_SECONDS from its ends;
 *   - it did not (`quiet` null): the transcript's times leave a real gap
 *     there, at least MIN_CUE_GAP_SECONDS, and the edge goes inside it.
 * A zero gap is not a pause: a subtitle track cannot hold overlapping cues,
 * so where speakers overlap the earlier cue ends exactly where the next one
 * begins (overlapping cue files are clipped the same way, transcript/build.ts).
 * Where speakers overlap there is no quiet stretch either, so the edge moves
 * to the nearest boundary where everyone is silent: the clip starts before
 * the sentence being talked over, or after the one talking over it, and takes
 * both whole. `pause_bounded` stays on a clip only when both edges are in
 * such a silence.
 *
 * Used for the speech-led video types (podcast, lecture, vlog, general);
 * gaming and sports keep the edges their picture and sound chose.
 */
import type { Transcript, VideoType } from "#contract";
import type { Candidate } from "../shared/types.ts";
import { QUIET_MARGIN_SECONDS } from "./features.ts";
import type { Interval, Limits } from "./select.ts";

export const SENTENCE_SNAPPED_TYPES: ReadonlySet<VideoType> = new Set(["podcast", "lecture", "vlog", "general"]);

interface Unit {
  start: number;
  end: number;
  question: boolean;
}

interface Boundaries {
  /** Where a clip may start before unit i (NaN when someone is speaking there). */
  startAt: number[];
  /** Where a clip may end after unit j (NaN when someone is speaking there). */
  endAt: number[];
}

/** Largest distance from a unit's edge into the silence around it. */
const EDGE_PAD = 0.25;
/** How far a quiet stretch may lie from a boundary's cue times and still be its pause. */
const CUE_TOLERANCE_SECONDS = 0.3;
/** Without the speech model, a gap in the transcript's times shorter than this is not a pause (chained cues, overlaps). */
const MIN_CUE_GAP_SECONDS = 0.3;
/** The question must end at most this long before the answer begins. */
const QUESTION_GAP = 3;
/** Seconds of edge movement a clip that opens with a question and its answer is worth. */
const QUESTION_BONUS = 6;
const ANSWER_OPENING_PENALTY = 1000;

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/**
 * The silence at the boundary between what ends at `before` (the running end
 * of the units so far; null before the first) and what starts at `after`
 * (null after the last): where a clip may start and end there, NaN where it
 * may not.
 */
function silenceAt(before: number | null, after: number | null, quiet: Interval[] | null, duration: number): { start: number; end: number } {
  if (quiet === null) {
    if (before === null) return { start: Math.max(0, (after ?? 0) - EDGE_PAD), end: Number.NaN };
    if (after === null) return { start: Number.NaN, end: Math.min(duration, before + EDGE_PAD) };
    const gap = after - before;
    if (gap < MIN_CUE_GAP_SECONDS) return { start: Number.NaN, end: Number.NaN };
    return { start: after - Math.min(EDGE_PAD, gap / 2), end: before + Math.min(EDGE_PAD, gap / 2) };
  }
  const low = before === null ? 0 : Math.min(before, after ?? before) - CUE_TOLERANCE_SECONDS;
  const high = after === null ? duration : Math.max(after, before ?? after) + CUE_TOLERANCE_SECONDS;
  const reaching = quiet.filter((q) => Math.min(q.end - QUIET_MARGIN_SECONDS, high) >= Math.max(q.start + QUIET_MARGIN_SECONDS, low));
  // A start edge goes in the stretch nearest where the next unit starts, an end edge in the one nearest where the last ended.
  const nearest = (t: number) => reaching.reduce<Interval | null>((best, q) => (best === null || distance(q, t) < distance(best, t) ? q : best), null);
  const place = (q: Interval | null, edge: "start" | "end"): number => {
    if (!q) return Number.NaN;
    const from = Math.max(q.start + QUIET_MARGIN_SECONDS, low);
    const to = Math.min(q.end - QUIET_MARGIN_SECONDS, high);
    const middle = (q.start + q.end) / 2;
    return clamp(edge === "start" ? Math.max(middle, q.end - EDGE_PAD) : Math.min(middle, q.start + EDGE_PAD), from, to);
  };
  return {
    start: after === null ? Number.NaN : place(nearest(after), "start"),
    end: before === null ? Number.NaN : place(nearest(before), "end"),
  };
}

function distance(interval: Interval, t: number): number {
  return t < interval.start ? interval.start - t : t > interval.end ? t - interval.end : 0;
}

function boundaries(units: Unit[], duration: number, quiet: Interval[] | null): Boundaries {
  const startAt: number[] = [];
  const endAt: number[] = [];
  // Boundary k lies between unit k-1 and unit k; its end edge belongs to unit k-1, its start edge to unit k.
  let runningEnd: number | null = null;
  for (let k = 0; k <= units.length; k++) {
    const next = units[k];
    const silence = silenceAt(runningEnd, next ? next.start : null, quiet, duration);
    if (next) startAt.push(silence.start);
    if (k > 0) endAt.push(silence.end);
    if (next) runningEnd = Math.max(runningEnd ?? 0, next.end);
  }
  return { startAt, endAt };
}

interface Choice {
  start: number;
  end: number;
  first: number;
  last: number;
}

function bestChoice(units: Unit[], b: Boundaries, want: { start: number; end: number }, limits: Limits, free: (s: number, e: number) => boolean): Choice | null {
  const reach = Math.max(3, (want.end - want.start) / 2);
  let best: (Choice & { cost: number }) | null = null;
  for (let i = 0; i < units.length; i++) {
    const start = b.startAt[i]!;
    if (Number.isNaN(start) || Math.abs(start - want.start) > reach) continue;
    for (let j = i; j < units.length; j++) {
      const end = b.endAt[j]!;
      if (Number.isNaN(end)) continue;
      const length = end - start;
      if (length > limits.max + 1e-9) break;
      if (length < limits.min - 1e-9 || Math.abs(end - want.end) > reach || !free(start, end)) continue;
      const opensWithAnswered = units[i]!.question && j > i && !units[i + 1]!.question;
      // Opening on the answer to the question just before is a last resort: the clip should start with the question.
      const previous = units[i - 1];
      const opensOnAnswer = previous?.question === true && !units[i]!.question && units[i]!.start - previous.end <= QUESTION_GAP;
      const cost =
        Math.abs(start - want.start) + Math.abs(end - want.end) - (opensWithAnswered ? QUESTION_BONUS : 0) + (opensOnAnswer ? ANSWER_OPENING_PENALTY : 0);
      if (!best || cost < best.cost) best = { start, end, first: i, last: j, cost };
    }
  }
  return best;
}

function sentenceUnits(transcript: Transcript): Unit[] {
  return [...transcript.sentences]
    .sort((a, b) => a.start - b.start)
    .map((s) => ({ start: s.start, end: s.end, question: /\?["'”’)\]]*$/.test(s.text.trim()) }));
}

function wordUnits(transcript: Transcript): Unit[] {
  return [...transcript.words].sort((a, b) => a.start - b.start).map((w) => ({ start: w.start, end: w.end, question: false }));
}

/** Whether `t` is inside one of the quiet stretches (always true without them: the analysis's own pauses are kept as they are). */
function inQuiet(t: number, quiet: Interval[] | null): boolean {
  return quiet === null || quiet.some((q) => t >= q.start && t <= q.end);
}

/**
 * `quiet`: where the speech model heard no one (the analysis's onQuiet), or
 * null when it did not run.
 */
export function snapToSentences(candidates: Candidate[], transcript: Transcript, limits: Limits, quiet: Interval[] | null): Candidate[] {
  const sentences = sentenceUnits(transcript);
  const words = wordUnits(transcript);
  const sentenceEdges = boundaries(sentences, limits.duration, quiet);
  const wordEdges = boundaries(words, limits.duration, quiet);
  // A kept edge that is not in a silence makes no claim to one.
  const honest = (c: Candidate): Candidate =>
    c.reasons.includes("pause_bounded") && !(inQuiet(c.start, quiet) && inQuiet(c.end, quiet)) ? { ...c, reasons: c.reasons.filter((r) => r !== "pause_bounded") } : c;
  const taken: { start: number; end: number }[] = [];
  const free = (s: number, e: number) => taken.every((t) => e <= t.start + 1e-9 || s >= t.end - 1e-9);
  const out: Candidate[] = [];
  for (const candidate of candidates) {
    const hasWords = words.some((w) => (w.start + w.end) / 2 >= candidate.start && (w.start + w.end) / 2 < candidate.end);
    if (!hasWords) {
      if (free(candidate.start, candidate.end)) {
        taken.push(candidate);
        out.push(honest(candidate));
      }
      continue;
    }
    let reasons: string[] = [];
    let choice = bestChoice(sentences, sentenceEdges, candidate, limits, free);
    if (choice) {
      reasons.push("complete_thought");
      const question = sentences[choice.first - 1];
      const startAt = sentenceEdges.startAt[choice.first - 1];
      const firstIsAnswer = !sentences[choice.first]!.question;
      if (question?.question && firstIsAnswer && startAt !== undefined && !Number.isNaN(startAt) && sentences[choice.first]!.start - question.end <= QUESTION_GAP) {
        const length = choice.end - startAt;
        if (length <= limits.max + 1e-9 && free(startAt, choice.end)) choice = { ...choice, start: startAt, first: choice.first - 1 };
      }
      const opening = sentences[choice.first]!;
      const answered = sentences.slice(choice.first + 1, choice.last + 1).some((s) => !s.question);
      if (opening.question && answered) reasons = ["question_answer", ...reasons];
    } else {
      choice = bestChoice(words, wordEdges, candidate, limits, free);
    }
    // Both edges of a choice are in silences by construction; kept edges are checked.
    const placed = choice ? { ...candidate, start: choice.start, end: choice.end } : honest(candidate);
    if (!free(placed.start, placed.end)) continue;
    taken.push(placed);
    out.push({
      ...placed,
      reasons: [...reasons, ...placed.reasons.filter((r) => !reasons.includes(r))].slice(0, 8),
      // A crop plan keyed to the old edges would leave gaps; scenes are re-cut to the new span.
      ...(candidate.crop ? { crop: recutCrop(candidate.crop, placed.start, placed.end) } : {}),
    });
  }
  return out;
}

function recutCrop(crop: NonNullable<Candidate["crop"]>, start: number, end: number): NonNullable<Candidate["crop"]> {
  if (crop.length === 0) return crop;
  const inside = crop.filter((c) => c.toSeconds > start && c.fromSeconds < end).map((c) => ({ ...c }));
  const list = inside.length > 0 ? inside : [{ ...crop[0]! }];
  list[0]!.fromSeconds = start;
  list[list.length - 1]!.toSeconds = end;
  return list;
}
