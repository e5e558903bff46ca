/**
 * The final ranking (docs/judgement.md): a judged candidate's score blends
 * the model's sub-scores with the signals' score; its edges move to the
 * model's tighter ones only when they are the candidate's own sentence
 * boundaries, inside the analysed range and still of a configured length;
 * the post and key words come with it. Candidates the model did not score
 * keep their signal score and are judged by signals.
 */
import type { ClipScores, JudgeSentence, JudgeVerdict } from "#contract";
import type { Candidate } from "../shared/types.ts";

/** The model's share of a judged clip's final score. */
export const MODEL_WEIGHT = 0.6;
/** How the sub-scores make the model's score: the hook matters most on a feed. */
const SUB_WEIGHTS: ClipScores = { hook: 0.35, payoff: 0.25, standalone: 0.25, energy: 0.15 };
const EPSILON = 0.002;

export function modelScore(scores: ClipScores): number {
  return (scores.hook * SUB_WEIGHTS.hook + scores.payoff * SUB_WEIGHTS.payoff + scores.standalone * SUB_WEIGHTS.standalone + scores.energy * SUB_WEIGHTS.energy) / 100;
}

export interface CombineLimits {
  min: number;
  max: number;
  /** The analysed range of the source (all of it, or time_range). */
  from: number;
  to: number;
}

/** The verdict's edges when they hold; else the candidate's own. */
export function tightened(candidate: Candidate, verdict: JudgeVerdict, sentences: readonly JudgeSentence[], limits: CombineLimits): { start: number; end: number } {
  const start = verdict.start ?? candidate.start;
  const end = verdict.end ?? candidate.end;
  const onStart = verdict.start === null || sentences.some((s) => Math.abs(s.start - start) < EPSILON);
  const onEnd = verdict.end === null || sentences.some((s) => Math.abs(s.end - end) < EPSILON);
  const inside = start >= Math.max(limits.from, candidate.start) - EPSILON && end <= Math.min(limits.to, candidate.end) + EPSILON && end > start;
  const length = end - start;
  if (!onStart || !onEnd || !inside || length < limits.min - EPSILON || length > limits.max + EPSILON) return { start: candidate.start, end: candidate.end };
  return { start, end };
}

export interface Judged {
  candidate: Candidate;
  verdict: JudgeVerdict | null;
  sentences: readonly JudgeSentence[];
}

/** The candidates re-ranked, best first, `count` of them, each with its index in `items`. */
export function combine(items: readonly Judged[], limits: CombineLimits, count: number, emphasise: boolean): { candidate: Candidate; index: number }[] {
  const ranked = items.map(({ candidate, verdict, sentences }, index): { candidate: Candidate; index: number } => {
    if (!verdict || !verdict.scores) return { candidate, index };
    const edges = tightened(candidate, verdict, sentences, limits);
    const score = (1 - MODEL_WEIGHT) * candidate.score + MODEL_WEIGHT * modelScore(verdict.scores);
    const judged: Candidate = {
      ...candidate,
      ...edges,
      score: Math.round(Math.min(1, Math.max(0, score)) * 1000) / 1000,
      reasons: [...(verdict.reason ? [verdict.reason] : []), ...candidate.reasons].slice(0, 8),
      judged: {
        scores: verdict.scores,
        title: verdict.title,
        description: verdict.description,
        hashtags: verdict.hashtags,
        emphasis: emphasise ? verdict.emphasis : [],
      },
    };
    return { candidate: judged, index };
  });
  return ranked.sort((a, b) => b.candidate.score - a.candidate.score || a.candidate.start - b.candidate.start).slice(0, count);
}
