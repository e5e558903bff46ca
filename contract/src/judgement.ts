/**
 * Clips judged the way an editor judges them (docs/judgement.md): the engine
 * proposes several times more candidate spans than the clips asked for, the
 * Worker has a text-generation model on Workers AI read their words and
 * answer, per candidate, four sub-scores, a one-line reason, tighter edges
 * (as sentence numbers inside the candidate) and the post (title,
 * description, hashtags, up to three words to emphasise). What the model did
 * not answer, or answered out of bounds, is left to the signals.
 *
 *   POST {callback_base}/internal/v1/jobs/:id/judge  JudgeRequest -> JudgeResult
 *
 * The route always answers 200 with a JudgeResult: where no model answered
 * (no binding, a timeout, 5xx, the account's quota, the job's budget), the
 * result says `judged_by: "signals"` and why, and the job goes on.
 */
import { z } from "zod";
import { Prompt, VideoType } from "./vocabulary.ts";

/** The four sub-scores, 0-100 each. */
export const SUB_SCORES = ["hook", "payoff", "standalone", "energy"] as const;
const SubScore = z.number().int().min(0).max(100);
export const ClipScores = z.object({
  /** The first seconds make a viewer stay. */
  hook: SubScore,
  /** It ends on a resolution, an answer or a punchline. */
  payoff: SubScore,
  /** It makes sense without what came before. */
  standalone: SubScore,
  /** Energy and emotion. */
  energy: SubScore,
});
export type ClipScores = z.infer<typeof ClipScores>;

/** Who ranked a clip: a language model on its words, or the signal heuristics alone. */
export const JUDGED_BY = ["model", "signals"] as const;
export const JudgedBy = z.enum(JUDGED_BY);
export type JudgedBy = z.infer<typeof JudgedBy>;

/** The post's bounds. */
export const MAX_POST_TITLE_CHARS = 70;
export const MAX_POST_DESCRIPTION_CHARS = 400;
export const MAX_HASHTAGS = 5;
export const MAX_HASHTAG_CHARS = 40;
/** Key words or phrases a clip's captions may emphasise, and their length. */
export const MAX_EMPHASIS = 3;
export const MAX_EMPHASIS_CHARS = 40;
/** The model's one-line reason. */
export const MAX_JUDGE_REASON_CHARS = 120;

/** A hashtag as served: `#` and letters, digits or underscores of any script. */
export const HASHTAG_PATTERN = /^#[\p{L}\p{N}_]{1,39}$/u;
export const Hashtag = z.string().regex(HASHTAG_PATTERN);

/** The model's post for one clip. */
export const ClipPost = z.object({
  title: z.string().min(1).max(MAX_POST_TITLE_CHARS),
  description: z.string().min(1).max(MAX_POST_DESCRIPTION_CHARS),
  hashtags: z.array(Hashtag).max(MAX_HASHTAGS),
});
export type ClipPost = z.infer<typeof ClipPost>;

/** Sources longer than this get chapters. */
export const CHAPTERS_MIN_SOURCE_SECONDS = 600;
export const MAX_CHAPTERS = 40;
export const MAX_CHAPTER_TITLE_CHARS = 70;
export const Chapter = z.object({
  title: z.string().min(1).max(MAX_CHAPTER_TITLE_CHARS),
  start_seconds: z.number().nonnegative(),
});
export type Chapter = z.infer<typeof Chapter>;

/** What judged a job's clips (CompleteReport.judgement). */
export const JobJudgement = z.object({
  judged_by: JudgedBy,
  /** The model that judged (null on signals). */
  model: z.string().max(120).nullable(),
  /** Why the clips were judged by signals (null when a model judged them all). */
  fallback_reason: z.string().max(300).nullable(),
});
export type JobJudgement = z.infer<typeof JobJudgement>;

// ---- The engine channel's /judge ------------------------------------------------

/** Candidates per /judge request: the engine proposes JUDGE_CANDIDATES_PER_CLIP per clip asked, up to this. */
export const JUDGE_MAX_CANDIDATES = 60;
export const JUDGE_CANDIDATES_PER_CLIP = 3;
/** Sentences of one candidate, and characters of one sentence, the engine sends. */
export const JUDGE_MAX_SENTENCES = 60;
export const JUDGE_MAX_SENTENCE_CHARS = 600;
/** Transcript sections the engine sends for chapters (one per JUDGE_SECTION_SECONDS of source), and their excerpt. */
export const JUDGE_MAX_SECTIONS = MAX_CHAPTERS;
export const JUDGE_MAX_SECTION_CHARS = 800;
export const JUDGE_MAX_BODY_BYTES = 1024 * 1024;

export const JudgeSentence = z.object({
  start: z.number().nonnegative(),
  end: z.number().nonnegative(),
  text: z.string().min(1).max(JUDGE_MAX_SENTENCE_CHARS),
});
export type JudgeSentence = z.infer<typeof JudgeSentence>;

export const JudgeCandidate = z.object({
  /** The engine's own number for the candidate, echoed in the verdict. */
  id: z.number().int().min(0).max(999),
  start: z.number().nonnegative(),
  end: z.number().positive(),
  /** The signal heuristics' score, 0-1. */
  signal_score: z.number().min(0).max(1),
  /** The candidate's sentences, in order; tighter edges are picked among them. */
  sentences: z.array(JudgeSentence).min(1).max(JUDGE_MAX_SENTENCES),
});
export type JudgeCandidate = z.infer<typeof JudgeCandidate>;

export const JudgeSection = z.object({
  id: z.number().int().min(0).max(999),
  start: z.number().nonnegative(),
  /** The section's first words. */
  text: z.string().min(1).max(JUDGE_MAX_SECTION_CHARS),
});
export type JudgeSection = z.infer<typeof JudgeSection>;

export const JudgeRequest = z.object({
  /** The transcript's language (ISO 639-1), the language of the post; null: unknown. */
  language: z.string().max(20).nullable(),
  /** The language the post is written in when the captions are translated; null: `language`. */
  post_language: z.string().max(20).nullable(),
  video_type: VideoType,
  prompt: Prompt.nullable(),
  clips_wanted: z.number().int().min(1).max(20),
  source_duration_seconds: z.number().positive(),
  candidates: z.array(JudgeCandidate).min(1).max(JUDGE_MAX_CANDIDATES),
  /** Present only for sources longer than CHAPTERS_MIN_SOURCE_SECONDS. */
  sections: z.array(JudgeSection).max(JUDGE_MAX_SECTIONS).default([]),
});
export type JudgeRequest = z.infer<typeof JudgeRequest>;

/** One candidate as judged. Every field the model did not answer well is null (or empty): signals decide it. */
export const JudgeVerdict = z.object({
  id: z.number().int().min(0).max(999),
  scores: ClipScores.nullable(),
  reason: z.string().min(1).max(MAX_JUDGE_REASON_CHARS).nullable(),
  /** Tighter edges, at the candidate's own sentence boundaries (null: keep the candidate's). */
  start: z.number().nonnegative().nullable(),
  end: z.number().positive().nullable(),
  title: z.string().min(1).max(MAX_POST_TITLE_CHARS).nullable(),
  description: z.string().min(1).max(MAX_POST_DESCRIPTION_CHARS).nullable(),
  hashtags: z.array(Hashtag).max(MAX_HASHTAGS),
  emphasis: z.array(z.string().min(1).max(MAX_EMPHASIS_CHARS)).max(MAX_EMPHASIS),
});
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

export const JudgeUsage = z.object({
  calls: z.number().int().nonnegative(),
  tokens_in: z.number().int().nonnegative(),
  tokens_out: z.number().int().nonnegative(),
});
export type JudgeUsage = z.infer<typeof JudgeUsage>;

export const JudgeResult = z.object({
  judged_by: JudgedBy,
  model: z.string().max(120).nullable(),
  /** Why some or all candidates are left to signals; null when the model judged every one. */
  fallback_reason: z.string().max(300).nullable(),
  verdicts: z.array(JudgeVerdict).max(JUDGE_MAX_CANDIDATES),
  chapters: z.array(z.object({ id: z.number().int().min(0).max(999), title: z.string().min(1).max(MAX_CHAPTER_TITLE_CHARS) })).max(JUDGE_MAX_SECTIONS),
  usage: JudgeUsage,
});
export type JudgeResult = z.infer<typeof JudgeResult>;
