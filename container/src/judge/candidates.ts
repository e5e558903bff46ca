/**
 * The candidate pool for judgement (docs/judgement.md): the analysis's own
 * picks first, then the next best non-overlapping windows the video type's
 * strategy scored, up to JUDGE_CANDIDATES_PER_CLIP times the clips asked,
 * all moved onto sentence edges in pauses (sentence-cuts.ts) when the type
 * cuts on sentences. Without a transcript nothing can be judged, and the
 * pool is the analysis's picks as they were.
 */
import { JUDGE_CANDIDATES_PER_CLIP, JUDGE_MAX_CANDIDATES, type Transcript } from "#contract";
import { snapToSentences } from "../analyse/sentence-cuts.ts";
import { pickBest, type Interval, type Limits, type ScoredWindow } from "../analyse/select.ts";
import type { Candidate } from "../shared/types.ts";

/** Windows scoring below this are not proposed (the analysis's own bar for a clip is 0.2). */
const MIN_PROPOSAL_SCORE = 0.08;

export interface ProposalRequest {
  /** The analysis's picks, best first, in source seconds. */
  analysed: Candidate[];
  /** Every window the strategy scored, in source seconds. */
  windows: ScoredWindow[];
  transcript: Transcript | null;
  /** Snap edges onto sentences (the video type cuts on them). */
  snapped: boolean;
  limits: Limits;
  quiet: Interval[] | null;
  clipsWanted: number;
}

export function proposeCandidates(req: ProposalRequest): Candidate[] {
  if (!req.transcript) return req.analysed;
  const wanted = Math.min(JUDGE_MAX_CANDIDATES, req.clipsWanted * JUDGE_CANDIDATES_PER_CLIP);
  const free = req.windows.filter((w) => req.analysed.every((a) => w.end <= a.start || w.start >= a.end));
  const extra = pickBest(free, Math.max(0, wanted - req.analysed.length), MIN_PROPOSAL_SCORE).map((w): Candidate => ({ start: w.start, end: w.end, score: w.score, reasons: w.reasons.slice(0, 8) }));
  const pool = [...req.analysed, ...extra];
  return req.snapped ? snapToSentences(pool, req.transcript, req.limits, req.quiet) : pool;
}
