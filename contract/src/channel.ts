/**
 * The Worker <-> clip engine channel: the bodies each side sends and the
 * routes it sends them to. Schema and type share a name.
 *
 * Direction 1, Worker -> engine (engine HTTP server, port ENGINE_PORT):
 *   GET  /health                        -> EngineHealth
 *   POST /jobs           StartJob        -> 202 StartJobAccepted (idempotent per job_id, or per
 *                                           job_id and clip_edit.edit_id for a clip edit)
 *   POST /jobs/:id/cancel                -> 202 | 404
 * Both POSTs carry an ENGINE_SIGNATURE_HEADER, an Ed25519 signature made with
 * the Worker's ENGINE_SIGNING_KEY (see signEngineRequest), that the engine
 * verifies with ENGINE_VERIFY_KEY and accepts once; it answers 401 to anything
 * else and starts nothing. What the engine may reach (private hosts) and where it calls back
 * come from its own environment, never from a request.
 *
 * Direction 2, engine -> Worker (under the engine's CALLBACK_BASE, Bearer job
 * token, which opens only the routes of its job's scopes: src/engine/scopes.ts):
 *   POST {callback_base}/internal/v1/jobs/:id/progress  ProgressReport -> CallbackAck
 *   POST {callback_base}/internal/v1/jobs/:id/probe     ProbeReport    -> ProbeAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/clips/:index            (video/mp4 body)  -> CallbackAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/clips/:index/thumbnail  (image/jpeg body) -> CallbackAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/transcript  Transcript (JSON)   -> CallbackAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/clips/:index/captions.vtt (text/vtt) -> CallbackAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/clips/:index/captions.srt (application/x-subrip) -> CallbackAck
 *   POST {callback_base}/internal/v1/jobs/:id/transcribe  (audio/wav) -> TranscribeResult | 503 | 502
 *   POST {callback_base}/internal/v1/jobs/:id/similarity  SimilarityRequest -> SimilarityResult | 503 | 502
 *   POST {callback_base}/internal/v1/jobs/:id/translate   TranslateRequest -> TranslateResult | 503 | 502
 *   GET  {callback_base}/internal/v1/jobs/:id/logo        -> the account's logo (image/png | image/jpeg) | 404
 *   POST {callback_base}/internal/v1/jobs/:id/judge       JudgeRequest -> JudgeResult (always 200; judgement.ts)
 *   POST {callback_base}/internal/v1/jobs/:id/complete  CompleteReport -> CallbackAck | 503 completion_in_progress
 *        (idempotent: a repeat after the job completed is answered 200; 503 with
 *        COMPLETION_IN_PROGRESS means the clips are still being published: send it again)
 *   POST {callback_base}/internal/v1/jobs/:id/fail      FailReport     -> CallbackAck
 *   POST {callback_base}/internal/v1/jobs/:id/interrupted InterruptedReport -> CallbackAck
 *        (the engine is shutting down, e.g. a redeploy: the Worker puts the job back in the queue)
 *
 * Callback answers: 200 with the ack body while the job is live; 401 for a bad,
 * expired or foreign token; 409 (problem+json, code job_not_active) once the
 * job is no longer processing (canceled, failed by the watchdog, finished):
 * the engine must stop work, clean up and send nothing more for that job.
 */
import { z } from "zod";
import { CaptionLanguage } from "./languages.ts";
import { ClipEdit } from "./clip-edit.ts";
import { Chapter, ClipScores, Hashtag, JobJudgement, JudgedBy, MAX_CHAPTERS, MAX_HASHTAGS, MAX_POST_DESCRIPTION_CHARS } from "./judgement.ts";
import { ClipConfig, FailureCode, REFRAME_USED, RemovedSpan, TimeRange, VideoType } from "./vocabulary.ts";

export const ENGINE_PORT = 8788;

/** Path prefix of the Worker's internal routes that the engine calls. */
export const CALLBACK_PREFIX = "/internal/v1/jobs";

/**
 * Limits the Worker hands to the engine with every job (SPEC section 7).
 * Whether private hosts are allowed is not among them: that is the engine's
 * own setting (ALLOW_PRIVATE_SOURCES in its environment).
 */
export const EngineLimits = z.object({
  max_source_bytes: z.number().int().positive(),
  max_source_seconds: z.number().positive(),
  download_timeout_seconds: z.number().positive(),
});
export type EngineLimits = z.infer<typeof EngineLimits>;

/**
 * When the job was submitted and when its dispatch began (epoch ms, the
 * Worker's clock): the engine hands them back in its complete report's
 * timings, so the completion log line spans the whole job.
 * granted_at (the fleet granted an engine) and sent_at (StartJob left the
 * Worker) split the dispatch stage; absent from an older Worker.
 */
export const DispatchTimes = z.object({
  submitted_at: z.number().int().nonnegative(),
  dispatched_at: z.number().int().nonnegative(),
  granted_at: z.number().int().nonnegative().optional(),
  sent_at: z.number().int().nonnegative().optional(),
});
export type DispatchTimes = z.infer<typeof DispatchTimes>;

/** Unknown members (an old Worker's callback_base, allow_private_hosts) are dropped by parsing. */
export const StartJob = z.object({
  job_id: z.string().regex(/^job_[A-Za-z0-9]{16,40}$/),
  /** Bearer token for every callback of this job. */
  token: z.string().min(20),
  video_url: z.string().url(),
  /** "upload": the source is a direct upload, read from GET {callback_base}/internal/v1/jobs/:id/source with the token; video_url is upload://<id>/<file name>. Absent: "url". */
  source: z.enum(["url", "upload"]).optional(),
  video_type: VideoType,
  config: ClipConfig,
  limits: EngineLimits,
  /** SRT or WebVTT file named at submission; fetched under the same rules as video_url. */
  captions_url: z.string().url().nullish(),
  /** Only this part of the source is analysed and clipped; absent or null: all of it. */
  time_range: TimeRange.nullish(),
  /** Absent from an older Worker: the report's timings then start at the engine. */
  timeline: DispatchTimes.optional(),
  /** Render this one clip again (clip-edit.ts) instead of running the whole job. */
  clip_edit: ClipEdit.optional(),
});
export type StartJob = z.infer<typeof StartJob>;

export const StartJobAccepted = z.object({
  job_id: z.string(),
  /** true when this call started the job, false when it was already running. */
  started: z.boolean(),
});
export type StartJobAccepted = z.infer<typeof StartJobAccepted>;

export const EngineHealth = z.object({
  ok: z.literal(true),
  backend: z.enum(["native", "wasm"]),
  active_jobs: z.number().int().nonnegative(),
});
export type EngineHealth = z.infer<typeof EngineHealth>;

export const ProgressReport = z.object({
  /** 0-99 while processing; the Worker never lets progress decrease. */
  progress: z.number().int().min(0).max(99),
  step: z.string().min(1).max(120),
});
export type ProgressReport = z.infer<typeof ProgressReport>;

export const ProbeReport = z.object({
  duration_seconds: z.number().positive(),
  title: z.string().max(300),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  format: z.string().max(100),
  size_bytes: z.number().int().nonnegative(),
});
export type ProbeReport = z.infer<typeof ProbeReport>;

/** `proceed: false` means the Worker refused (e.g. credits) and has failed the job. */
export const ProbeAck = z.object({
  proceed: z.boolean(),
  credits_reserved: z.number().int().nonnegative(),
  error: z.object({ code: FailureCode, message: z.string() }).optional(),
});
export type ProbeAck = z.infer<typeof ProbeAck>;

export const CallbackAck = z.object({ ok: z.literal(true) });
export type CallbackAck = z.infer<typeof CallbackAck>;

/** One spoken word; times in seconds of source time. */
export const TranscriptWord = z.object({
  text: z.string(),
  start: z.number(),
  end: z.number(),
  speaker: z.string().optional(),
});
export type TranscriptWord = z.infer<typeof TranscriptWord>;

export const TranscriptSentence = z.object({
  text: z.string(),
  start: z.number(),
  end: z.number(),
  speaker: z.string().optional(),
});
export type TranscriptSentence = z.infer<typeof TranscriptSentence>;

/** Where a job's transcript came from (best first: workers_ai, subtitle_track, platform_subtitles, captions_url). */
export const TRANSCRIPT_SOURCES = ["workers_ai", "subtitle_track", "platform_subtitles", "captions_url"] as const;
export const TranscriptSource = z.enum(TRANSCRIPT_SOURCES);
export type TranscriptSource = z.infer<typeof TranscriptSource>;

/** Body of PUT {callback_base}/internal/v1/jobs/:id/transcript (<= MAX_TRANSCRIPT_UPLOAD_BYTES). */
export const Transcript = z.object({
  source: TranscriptSource,
  language: z.string().nullable(),
  words: z.array(TranscriptWord),
  sentences: z.array(TranscriptSentence),
});
export type Transcript = z.infer<typeof Transcript>;

export const TranscriptSummary = z.object({
  source: TranscriptSource,
  language: z.string().nullable(),
  word_count: z.number().int().nonnegative(),
});
export type TranscriptSummary = z.infer<typeof TranscriptSummary>;

/**
 * Answer of POST {callback_base}/internal/v1/jobs/:id/transcribe (audio/wav body,
 * header Chunk-Start-Seconds). Word times are already offset by the chunk start.
 * 503 transcription_unavailable: no AI binding (local dev), try other sources;
 * 502 transcription_failed: the Worker retried and gave up, go on without.
 */
export const TranscribeResult = z.object({
  language: z.string().nullable(),
  words: z.array(TranscriptWord),
});
export type TranscribeResult = z.infer<typeof TranscribeResult>;

/** Whisper's input window: longest audio chunk the engine sends per /transcribe call. */
export const TRANSCRIBE_MAX_CHUNK_SECONDS = 30;
/** Overlap between consecutive chunks so no word is cut at a seam. */
export const TRANSCRIBE_CHUNK_OVERLAP_SECONDS = 1;
/** Largest /transcribe body (30 s of mono 16 kHz s16le is 960,044 bytes). */
export const TRANSCRIBE_MAX_CHUNK_BYTES = 1_200_000;
/** Header carrying the chunk's start in source seconds. */
export const CHUNK_START_HEADER = "Chunk-Start-Seconds";
/** Texts per /translate call, and the longest one (a sentence; longer ones are split by the engine). */
export const TRANSLATE_MAX_TEXTS = 32;
export const TRANSLATE_MAX_TEXT_CHARS = 600;
/** Largest /translate body. */
export const TRANSLATE_MAX_BODY_BYTES = 128 * 1024;
/** Largest transcript JSON the Worker accepts on the channel. */
export const MAX_TRANSCRIPT_UPLOAD_BYTES = 8 * 1024 * 1024;

/**
 * Body of POST {callback_base}/internal/v1/jobs/:id/similarity: how
 * close in meaning each text (a transcript sentence) is to the query (the
 * job's prompt), from Workers AI text embeddings (@cf/baai/bge-m3) computed
 * in the Worker. Vectors never cross the channel, only one cosine per text.
 * 503 similarity unavailable (no AI binding: the engine matches by words),
 * 502 the model kept failing (likewise).
 */
export const SIMILARITY_MAX_TEXTS = 100;

/**
 * Texts in consecutive batches of at most `maxTexts` texts and `maxChars`
 * characters (a text longer than `maxChars` goes alone): how the engine
 * splits its similarity requests and the Worker its model calls.
 */
export function textBatches(texts: readonly string[], maxTexts: number, maxChars: number): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let chars = 0;
  for (const text of texts) {
    if (current.length > 0 && (current.length >= maxTexts || chars + text.length > maxChars)) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(text);
    chars += text.length;
  }
  if (current.length > 0) out.push(current);
  return out;
}
/** Longest text sent (a sentence; longer ones are cut by the engine). */
export const SIMILARITY_MAX_TEXT_CHARS = 2000;
export const SimilarityRequest = z.object({
  query: z.string().min(1).max(SIMILARITY_MAX_TEXT_CHARS),
  texts: z.array(z.string().min(1).max(SIMILARITY_MAX_TEXT_CHARS)).min(1).max(SIMILARITY_MAX_TEXTS),
});
export type SimilarityRequest = z.infer<typeof SimilarityRequest>;
export const SimilarityResult = z.object({
  model: z.string(),
  /** Cosine similarity of each text to the query, in the request's order. */
  similarities: z.array(z.number().min(-1).max(1)),
});
export type SimilarityResult = z.infer<typeof SimilarityResult>;

/** Most punch-in zooms one clip reports (one a second over a 180 s clip). */
export const MAX_ZOOMS = 180;
/** One punch-in zoom, in source seconds: from the push in's start to the ease out's end. */
export const ZoomSpan = z.object({
  start_seconds: z.number().nonnegative(),
  end_seconds: z.number().nonnegative(),
});
export type ZoomSpan = z.infer<typeof ZoomSpan>;

/** Most removed spans one clip reports (a 180 s clip with a filler or pause every half second). */
export const MAX_REMOVED_SPANS = 400;

/**
 * Body of POST {callback_base}/internal/v1/jobs/:id/translate: texts (a clip's
 * spoken sentences) to translate, answered in the same order. 503
 * translation_unavailable: no AI binding (local dev), keep the spoken
 * language; 502 translation_failed: the Worker retried and gave up.
 */
export const TranslateRequest = z.object({
  source_language: CaptionLanguage,
  target_language: CaptionLanguage,
  texts: z.array(z.string().min(1).max(TRANSLATE_MAX_TEXT_CHARS)).min(1).max(TRANSLATE_MAX_TEXTS),
});
export type TranslateRequest = z.infer<typeof TranslateRequest>;

export const TranslateResult = z.object({ texts: z.array(z.string()) });
export type TranslateResult = z.infer<typeof TranslateResult>;

/** What became of a job's caption_language (null in CompleteReport when none was asked for). */
export const TRANSLATION_STATUSES = ["translated", "not_needed", "unavailable", "failed", "skipped"] as const;
export const TranslationOutcome = z.object({
  language: CaptionLanguage,
  status: z.enum(TRANSLATION_STATUSES),
  /** Why the captions are not in `language` (null when they are). */
  detail: z.string().max(300).nullable(),
});
export type TranslationOutcome = z.infer<typeof TranslationOutcome>;

/** Most straight pieces a reported crop path may have (the engine's own cap is 200 per view, plus its run-on piece). */
export const MAX_FRAMING_SEGMENTS = 256;

/**
 * One straight piece of the crop window's path: its centre, as fractions of
 * the source frame's width and height, moves from (x0, y0) to (x1, y1) over
 * [from_seconds, to_seconds), counted from the clip's first frame in source
 * time (before any removal). A piece that starts elsewhere than the last one
 * ended is a cut, not a pan.
 */
export const FramingSegment = z.object({
  from_seconds: z.number().nonnegative(),
  to_seconds: z.number().nonnegative(),
  x0: z.number().min(0).max(1),
  x1: z.number().min(0).max(1),
  y0: z.number().min(0).max(1),
  y1: z.number().min(0).max(1),
});
export type FramingSegment = z.infer<typeof FramingSegment>;

/**
 * How a clip was framed from its source, for exports to editors: the source's
 * picture, the crop window's size in source pixels (the largest window of the
 * output's shape) and its centre's path. `split` says the clip also shows two
 * stacked views at times (layout split/auto); the path is the single view's.
 */
export const ClipFraming = z.object({
  source_width: z.number().int().positive(),
  source_height: z.number().int().positive(),
  source_fps: z.number().positive().max(1000),
  crop_width: z.number().int().positive(),
  crop_height: z.number().int().positive(),
  path: z.array(FramingSegment).min(1).max(MAX_FRAMING_SEGMENTS),
  split: z.boolean(),
});
export type ClipFraming = z.infer<typeof ClipFraming>;

export const ClipReport = z.object({
  /** 0-based rank: 0 is the best clip. Matches the uploaded clip index. */
  index: z.number().int().min(0).max(19),
  start_seconds: z.number().nonnegative(),
  end_seconds: z.number().positive(),
  score: z.number().min(0).max(1),
  /** Signal names, and the model's one-line reason first when a model judged the clip. */
  reasons: z.array(z.string().min(1).max(120)).min(1).max(8),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  // Faces: what the crop followed and how many faces were seen (0 when none were looked for).
  reframe: z.enum(REFRAME_USED).default("center"),
  faces_count: z.number().int().nonnegative().default(0),
  /** The words spoken inside the clip; null without a transcript. */
  text: z.string().max(10000).nullable(),
  /** A short line chosen from the clip's own words; null without a transcript. */
  title: z.string().max(120).nullable(),
  captions_burned: z.boolean(),
  /** true when captions.vtt and captions.srt were uploaded for this clip. */
  sidecars: z.boolean(),
  /** How well the clip's words match the job's prompt, 0-1; null without a prompt. */
  prompt_match: z.number().min(0).max(1).nullable().default(null),
  /** Pauses and fillers cut out of the clip, in source seconds, in order. */
  removed: z.array(RemovedSpan).max(MAX_REMOVED_SPANS).default([]),
  /** The rendered clip's real length; absent: end_seconds - start_seconds (nothing removed). */
  duration_seconds: z.number().positive().optional(),
  /** Where the picture pushed in (config zoom: emphasis), in source seconds, in order; [] without zooms. */
  zooms: z.array(ZoomSpan).max(MAX_ZOOMS).default([]),
  /** The crop over the clip (absent from an older engine). */
  framing: ClipFraming.optional(),
  /** The model's sub-scores; null when signals alone judged the clip. */
  scores: ClipScores.nullable().default(null),
  judged_by: JudgedBy.default("signals"),
  /** The post: the model's description and hashtags (title is `title`); null and [] on signals. */
  description: z.string().max(MAX_POST_DESCRIPTION_CHARS).nullable().default(null),
  hashtags: z.array(Hashtag).max(MAX_HASHTAGS).default([]),
});
export type ClipReport = z.infer<typeof ClipReport>;

/** One stage of a job on the engine: milliseconds from the engine taking the job to its start and end. */
export const StageTiming = z.object({
  /** download, probe, analysis, transcript, render N, upload N, upload transcript, complete. */
  stage: z.string().min(1).max(40),
  start_ms: z.number().int().nonnegative(),
  end_ms: z.number().int().nonnegative(),
});
export type StageTiming = z.infer<typeof StageTiming>;

/** Where a job's time went: the engine's stages, with StartJob's timeline handed back. */
export const JobTimings = z.object({
  /** StartJob.timeline, as the engine received it (absent from an older Worker). */
  timeline: DispatchTimes.optional(),
  /** Epoch ms (the engine's clock) when the engine took the job. */
  engine_started_at: z.number().int().nonnegative(),
  stages: z.array(StageTiming).max(64),
});
export type JobTimings = z.infer<typeof JobTimings>;

export const CompleteReport = z.object({
  title: z.string().max(300),
  source_duration_seconds: z.number().positive(),
  clips: z.array(ClipReport).min(1).max(20),
  transcript: TranscriptSummary.nullable(),
  /** Why there is no transcript (null when there is one). */
  transcript_unavailable_reason: z.string().max(300).nullable(),
  /** The job's caption_language and whether the captions are in it; null when none was asked for. */
  translation: TranslationOutcome.nullable().default(null),
  /** Stage timings (absent from an older engine): the Worker logs them with its own stages at completion. */
  timings: JobTimings.optional(),
  /** What judged the clips; absent from an older engine. */
  judgement: JobJudgement.nullable().default(null),
  /** Sources longer than ten minutes: their chapters, in order. */
  chapters: z.array(Chapter).max(MAX_CHAPTERS).default([]),
});
export type CompleteReport = z.infer<typeof CompleteReport>;

export const FailReport = z.object({
  code: FailureCode,
  message: z.string().min(1).max(500),
});
export type FailReport = z.infer<typeof FailReport>;

/** The engine stops before finishing a job that is not its fault (SIGTERM on redeploy or scale-in). */
export const InterruptedReport = z.object({
  reason: z.enum(["shutdown"]),
});
export type InterruptedReport = z.infer<typeof InterruptedReport>;

/**
 * Largest JSON report (progress, probe, complete, fail, interrupted) the
 * Worker reads; a complete report of 20 clips with every field at its limit
 * stays well below it. A larger one is 413 payload_too_large.
 */
export const MAX_ENGINE_REPORT_BYTES = 2 * 1024 * 1024;

/** Largest clip or thumbnail upload the Worker accepts on the channel. */
export const MAX_CLIP_UPLOAD_BYTES = 512 * 1024 * 1024;

/** `code` of the 503 problem a completion is answered while its clips are still being published. */
export const COMPLETION_IN_PROGRESS = "completion_in_progress";

export function callbackUrl(base: string, jobId: string, suffix: string): string {
  return `${base.replace(/\/+$/, "")}${CALLBACK_PREFIX}/${jobId}/${suffix}`;
}
