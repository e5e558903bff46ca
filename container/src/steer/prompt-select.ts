/**
 * Clips for a prompt: the transcript's sentences, each with a
 * relevance to the prompt (0-1, from embeddings or words), become runs of
 * consecutive matching sentences; each run becomes one clip (split when
 * longer than max_clip_seconds, widened to its best neighbours when shorter
 * than min_clip_seconds), edges in the pauses around its sentences. Clips
 * are ranked by their match (duration-weighted relevance of their sentences)
 * together with the video type's own signal over their span, and the best
 * max_clips that do not overlap are kept. No matching sentence: nothing, and
 * the caller fails the job no_clips_found saying so.
 */
import type { TranscriptSentence } from "#contract";
import type { Candidate } from "../shared/types.ts";

/** A sentence counts as on the prompt's topic from this relevance up. */
export const MATCH_MIN = 0.3;
/** A sentence between two matching ones inherits this share of their relevance (a topic runs on through it). */
const NEIGHBOUR_SHARE = 0.6;
/** Neighbours further apart than this (seconds) are not one stretch of talk. */
const NEIGHBOUR_GAP = 3;
/** Share of a clip's score that is its prompt match; the rest is the video type's signal. */
const MATCH_WEIGHT = 0.75;
/** A clip whose match is below this share of the best clip's is left out, even with max_clips to fill. */
const WEAK_SHARE = 0.5;
/** Largest distance from a sentence's edge into the pause around it. */
const EDGE_PAD = 0.25;

export interface PromptLimits {
  min: number;
  max: number;
  /** The analysed window in source seconds (the time_range, or the whole source). */
  from: number;
  to: number;
}

export interface PromptChoice {
  candidates: Candidate[];
  /** prompt_match per candidate, same order. */
  matches: number[];
  /** Sentences whose relevance reached MATCH_MIN. */
  matchingSentences: number;
}

interface Span {
  first: number;
  last: number;
}

/**
 * Relevance with the topic's continuity: a sentence between two matching
 * ones (close in time) is partly on topic; one at a run's edge is not, so
 * runs do not creep into the next topic.
 */
export function topical(sentences: TranscriptSentence[], relevance: number[]): number[] {
  return relevance.map((own, i) => {
    const near = (j: number) => {
      const other = sentences[j];
      if (!other) return 0;
      const gap = j < i ? sentences[i]!.start - other.end : other.start - sentences[i]!.end;
      return gap <= NEIGHBOUR_GAP ? relevance[j]! : 0;
    };
    return Math.max(own, NEIGHBOUR_SHARE * Math.min(near(i - 1), near(i + 1)));
  });
}

export function selectPromptClips(opts: {
  sentences: TranscriptSentence[];
  /** Relevance of each sentence to the prompt, 0-1. */
  relevance: number[];
  limits: PromptLimits;
  maxClips: number;
  /** The video type's signal over a span (0-1); a flat 0.5 when unknown. */
  signal: (start: number, end: number) => number;
}): PromptChoice {
  const { sentences, limits } = opts;
  const rel = topical(sentences, opts.relevance);
  const matching = opts.relevance.filter((r) => r >= MATCH_MIN).length;
  const startAt = (i: number) => {
    const gap = i > 0 ? sentences[i]!.start - sentences[i - 1]!.end : EDGE_PAD * 2;
    return Math.max(limits.from, sentences[i]!.start - Math.max(0, Math.min(EDGE_PAD, gap / 2)));
  };
  const endAt = (j: number) => {
    const gap = j + 1 < sentences.length ? sentences[j + 1]!.start - sentences[j]!.end : EDGE_PAD * 2;
    return Math.min(limits.to, sentences[j]!.end + Math.max(0, Math.min(EDGE_PAD, gap / 2)));
  };
  const length = (s: Span) => endAt(s.last) - startAt(s.first);

  // Runs of consecutive sentences on the topic.
  const runs: Span[] = [];
  for (let i = 0; i < sentences.length; i++) {
    if (rel[i]! < MATCH_MIN) continue;
    const last = runs.at(-1);
    if (last && last.last === i - 1) last.last = i;
    else runs.push({ first: i, last: i });
  }

  const spans: Span[] = [];
  for (const run of runs) {
    // Too long: consecutive pieces of at most max seconds.
    let first = run.first;
    while (first <= run.last) {
      let last = first;
      while (last + 1 <= run.last && length({ first, last: last + 1 }) <= limits.max) last++;
      spans.push({ first, last });
      first = last + 1;
    }
  }
  const widened = spans.flatMap((span) => {
    // Too short: take in the better neighbour until it is long enough (or cannot be).
    const s = { ...span };
    while (length(s) < limits.min) {
      const before = s.first > 0 ? rel[s.first - 1]! : -1;
      const after = s.last + 1 < sentences.length ? rel[s.last + 1]! : -1;
      if (before < 0 && after < 0) break;
      if (after >= before) s.last++;
      else s.first--;
    }
    return length(s) >= limits.min - 1e-9 && length(s) <= limits.max + 1e-9 ? [s] : [];
  });

  const scored = widened.map((s) => {
    const start = startAt(s.first);
    const end = endAt(s.last);
    let weighted = 0;
    let total = 0;
    for (let i = s.first; i <= s.last; i++) {
      const d = Math.max(0.1, sentences[i]!.end - sentences[i]!.start);
      weighted += rel[i]! * d;
      total += d;
    }
    const match = Math.round((weighted / total) * 1000) / 1000;
    const signal = Math.min(1, Math.max(0, opts.signal(start, end)));
    return { start, end, match, score: Math.round((MATCH_WEIGHT * match + (1 - MATCH_WEIGHT) * signal) * 1000) / 1000, signal };
  });
  scored.sort((a, b) => b.score - a.score || a.start - b.start);
  const bestMatch = Math.max(0, ...scored.map((c) => c.match));
  const taken: typeof scored = [];
  for (const c of scored) {
    if (c.match < WEAK_SHARE * bestMatch) continue;
    if (taken.length >= opts.maxClips) break;
    if (taken.some((t) => c.start < t.end && t.start < c.end)) continue;
    taken.push(c);
  }
  return {
    candidates: taken.map((c) => ({
      start: c.start,
      end: c.end,
      score: c.score,
      reasons: ["prompt_match", "complete_thought"],
    })),
    matches: taken.map((c) => c.match),
    matchingSentences: matching,
  };
}
