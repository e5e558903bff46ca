/**
 * With a transcript, clip edges move to sentence boundaries: a clip starts
 * just before a sentence begins and ends just after one ends (inside the
 * pause between sentences, never inside a word), within the configured
 * lengths and as close as possible to where the analysis placed it. A clip
 * whose first sentence answers a question just before it starts with the
 * question instead. When no sentence boundaries fit (one very long
 * unpunctuated sentence), word boundaries are used; a clip with no words in
 * it keeps its edges.
 *
 * Used for the speech-led video types (podcast, lecture, vlog, general);
 * gaming and sports keep the edges their picture and sound chose.
 */
import type { Transcript, VideoType } from "#contract";
import type { Candidate } from "../types.ts";
import type { Limits } from "./select.ts";

export const SENTENCE_SNAPPED_TYPES: ReadonlySet<VideoType> = new Set(["podcast", "lecture", "vlog", "general"]);

interface Unit {
  start: number;
  end: number;
  question: boolean;
}

interface Boundaries {
  /** Where a clip may start before unit i (NaN when another unit is still running there). */
  startAt: number[];
  /** Where a clip may end after unit j (NaN when another unit has already begun). */
  endAt: number[];
}

/** Largest distance from a unit's edge into the gap around it. */
const EDGE_PAD = 0.25;
/** The question must end at most this long before the answer begins. */
const QUESTION_GAP = 3;
/** Seconds of edge movement a clip that opens with a question and its answer is worth. */
const QUESTION_BONUS = 6;
const ANSWER_OPENING_PENALTY = 1000;

function boundaries(units: Unit[], duration: number): Boundaries {
  const startAt: number[] = [];
  const endAt: number[] = [];
  let runningEnd = 0;
  units.forEach((unit, i) => {
    const gap = unit.start - runningEnd;
    startAt.push(i > 0 && gap < 0 ? Number.NaN : Math.max(0, unit.start - Math.min(EDGE_PAD, i > 0 ? gap / 2 : EDGE_PAD)));
    runningEnd = Math.max(runningEnd, unit.end);
  });
  let nextStart = duration;
  for (let j = units.length - 1; j >= 0; j--) {
    const unit = units[j]!;
    const gap = nextStart - unit.end;
    endAt[j] = gap < 0 ? Number.NaN : Math.min(duration, unit.end + Math.min(EDGE_PAD, gap / 2));
    nextStart = Math.min(nextStart, unit.start);
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

export function snapToSentences(candidates: Candidate[], transcript: Transcript, limits: Limits): Candidate[] {
  const sentences = sentenceUnits(transcript);
  const words = wordUnits(transcript);
  const sentenceEdges = boundaries(sentences, limits.duration);
  const wordEdges = boundaries(words, limits.duration);
  const taken: { start: number; end: number }[] = [];
  const free = (s: number, e: number) => taken.every((t) => e <= t.start + 1e-9 || s >= t.end - 1e-9);
  const out: Candidate[] = [];
  for (const candidate of candidates) {
    const hasWords = words.some((w) => (w.start + w.end) / 2 >= candidate.start && (w.start + w.end) / 2 < candidate.end);
    if (!hasWords) {
      if (free(candidate.start, candidate.end)) {
        taken.push(candidate);
        out.push(candidate);
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
    const placed = choice ? { ...candidate, start: choice.start, end: choice.end } : candidate;
    if (!free(placed.start, placed.end)) continue;
    taken.push(placed);
    out.push({
      ...placed,
      reasons: [...reasons, ...candidate.reasons.filter((r) => !reasons.includes(r))].slice(0, 8),
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
