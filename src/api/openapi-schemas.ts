/**
 * zod descriptions of the public API's request and response bodies. The
 * routes (src/api/*.ts) declare them with apiRoute(), so they validate
 * requests, type the handlers' answers and become the OpenAPI document's
 * components (the name given to `.openapi()`). Shapes follow SPEC section 3.
 */
import { z } from "@hono/zod-openapi";
import {
  CaptionFont,
  CaptionLanguage,
  ClipConfig,
  CAPTION_EMPHASIS_MODES,
  ZOOM_MODES,
  FailureCode,
  PLATFORM_IDS,
  HexColor,
  JUDGED_BY,
  LogoPosition,
  REFRAME_USED,
  REMOVE_SILENCE_MODES,
  REMOVED_KINDS,
  SpeechLanguage,
  TranscriptSource,
  TRANSLATION_STATUSES,
  VideoType,
} from "#contract";
import { ERROR_CODES, type ErrorCode } from "../http/errors.ts";
import { ClipDetail } from "../jobs/clip-schema.ts";

const Timestamp = z.iso.datetime().describe("RFC 3339 timestamp, UTC");
const JobId = z.string().regex(/^job_[A-Za-z0-9]+$/).describe("`job_` + at least 80 random bits");

/*
 * Request bodies carry no component name, so the document writes them inline
 * under requestBody: generators (openapi-typescript) then read a field with a
 * default as optional, which is how the API takes it.
 */

export const SubmitJobResponse = z.object({
  job_id: JobId,
  status: z.literal("queued"),
  message: z.string(),
  created_at: Timestamp.optional(),
}).openapi("SubmitJobResponse");

const JobCommon = {
  job_id: JobId,
  video_url: z.string().nullable().describe("null for a job made from an upload"),
  upload_id: z.string().optional().describe("The upload the job was made from (deleted when the job ends)"),
  video_type: VideoType,
  config_name: z.string().nullable(),
  captions_url: z.string().nullable(),
  prompt: z.string().nullable().describe("The topic the clips were chosen for; null without one"),
  time_range: z
    .object({ start_seconds: z.number(), end_seconds: z.number() })
    .nullable()
    .describe("The part of the video analysed and clipped; null: all of it"),
  remove_silence: z.enum(REMOVE_SILENCE_MODES),
  remove_fillers: z.boolean(),
  language_hint: z.string().nullable().describe("The spoken-language hint the job was given (`language` of the submission or its configuration); null: detected"),
  caption_language: z.string().nullable().describe("The language captions, sidecars and clip text were asked in; null: the spoken language. See `translation` once completed"),
  created_at: Timestamp,
  updated_at: Timestamp,
  source_duration_seconds: z.number().optional(),
  ai_usage: z
    .object({
      model_calls: z.number().int().describe("Workers AI calls that answered (speech-to-text chunks, translation texts, embedding batches, judgement)"),
      tokens_in: z.number().int().describe("Tokens sent: the model's own count where its answer gives one, else estimated at four characters a token"),
      tokens_out: z.number().int().describe("Tokens answered, counted the same way"),
      audio_seconds: z.number().describe("Seconds of audio sent to speech-to-text"),
      neurons: z.number().describe("Estimated neurons at the models' published prices (docs/workers-ai.md)"),
      estimated_usd: z.number().describe("neurons at $0.011 per 1,000, before the daily free allocation"),
    })
    .optional()
    .describe("The Workers AI usage this job caused, so far"),
};


const ActiveJob = z.object({
  ...JobCommon,
  status: z.enum(["queued", "processing"]),
  progress: z.number().int().min(0).max(100),
  step: z.string(),
  title: z.string().optional(),
});
const CompletedJob = z.object({
  ...JobCommon,
  status: z.literal("completed"),
  title: z.string(),
  clips_count: z.number().int(),
  clip_urls: z.array(z.url()).describe("One {cdn_url}/... link per clip, best first"),
  clips: z.array(ClipDetail),
  transcript: z
    .object({ source: TranscriptSource, language: z.string().nullable(), word_count: z.number().int() })
    .nullable()
    .describe("The transcript the clips were cut and captioned from (GET .../transcript), or null"),
  transcript_unavailable_reason: z.string().nullable().describe("Why there is no transcript; null when there is one"),
  language: z.string().nullable().describe("Spoken language (ISO 639-1) when known"),
  translation: z
    .object({
      language: z.string().describe("caption_language"),
      status: z.enum(TRANSLATION_STATUSES),
      detail: z.string().nullable(),
    })
    .nullable()
    .describe(
      "Null unless caption_language was asked for. status: translated (captions, sidecars and clip text are in `language`), not_needed (already spoken in it), unavailable (this deployment cannot translate, e.g. the local stack), failed (the model kept failing), skipped (no transcript, or its language is unknown); otherwise they stay in the spoken language and `detail` says why",
    ),
  judgement: z
    .object({
      judged_by: z.enum(JUDGED_BY),
      model: z.string().nullable().describe("The Workers AI model that judged the clips; null on signals"),
      fallback_reason: z.string().nullable().describe("Why some or all clips were judged by signals alone (no model on this deployment, a timeout, the model's quota, an answer that did not fit the schema); null when the model judged them all"),
    })
    .nullable()
    .describe("What chose and ranked the clips (docs/judgement.md); null for jobs completed before clips were judged"),
  chapters: z
    .array(z.object({ title: z.string(), start_seconds: z.number() }))
    .describe("Chapters of a source longer than ten minutes (title and start, in order); [] otherwise"),
  completed_at: Timestamp,
  credits_charged: z.number().int(),
});
const FailedJob = z.object({
  ...JobCommon,
  status: z.literal("failed"),
  title: z.string().optional(),
  error: z.object({ code: FailureCode, message: z.string() }),
  completed_at: Timestamp,
  credits_charged: z.literal(0),
});
const CanceledJob = z.object({
  ...JobCommon,
  status: z.literal("canceled"),
  title: z.string().optional(),
  completed_at: Timestamp,
  credits_charged: z.literal(0),
});
export const Job = z.discriminatedUnion("status", [ActiveJob, CompletedJob, FailedJob, CanceledJob]).openapi("Job");

export const JobListItem = z
  .object({
    job_id: JobId,
    status: z.enum(["queued", "processing", "completed", "failed", "canceled"]),
    title: z.string().nullable(),
    clips_count: z.number().int(),
    clip_urls: z.array(z.url()),
    created_at: Timestamp,
  })
  .openapi("JobListItem", { description: "The job's status shape without per-clip detail, plus title, clips_count and clip_urls" });
export const JobList = z.object({
  jobs: z.array(JobListItem),
  count: z.number().int(),
  next_cursor: z.string().nullable(),
}).openapi("JobList");

export const Usage = z.object({
  credits_remaining: z.number().int(),
  credits_total: z.number().int().describe("The plan's credits for the period"),
  plan: z.string(),
  credits_granted: z.number().int(),
  credits_used: z.number().int(),
  credits_reserved: z.number().int(),
  period_start: Timestamp,
  period_end: Timestamp,
  kept_source_bytes: z.number().int().describe("Bytes of completed upload jobs' sources kept for clip edits"),
  max_kept_source_bytes: z.number().int().describe("The plan's limit for kept sources; keeping one more past it releases the oldest first (docs/editing.md)"),
}).openapi("Usage");

export const VideoTypes = z.object({
  video_types: z.array(z.object({ value: VideoType, description: z.string() })),
  default: VideoType,
}).openapi("VideoTypes");

export const SavedConfig = z.object({
  name: z.string(),
  aspect_ratio: z.string(),
  resolution: z.number().int(),
  min_clip_seconds: z.number().int(),
  max_clip_seconds: z.number().int(),
  max_clips: z.number().int(),
  reframe: z.string(),
  layout: z.string(),
  captions: z.string(),
  caption_style: z.string(),
  caption_position: z.string(),
  prompt: z.string().nullable(),
  remove_silence: z.string(),
  remove_fillers: z.boolean(),
  caption_font: CaptionFont,
  caption_size: z.number().int().describe("Percent of the caption style's own size"),
  caption_color: HexColor,
  caption_highlight_color: HexColor,
  caption_outline_color: HexColor,
  caption_box_color: HexColor,
  logo_position: LogoPosition,
  logo_size: z.number().int().describe("The logo's width, percent of the clip's width"),
  logo_opacity: z.number(),
  hook_title_seconds: z.number().int().describe("Seconds the clip's title shows from its start; 0: no hook title"),
  language: SpeechLanguage.nullable().describe("Spoken language hint (ISO 639-1); null: detected"),
  caption_language: CaptionLanguage.nullable().describe("Language captions, sidecars and clip text are translated into; null: the spoken language"),
  caption_emphasis: z.enum(CAPTION_EMPHASIS_MODES).describe("keywords: a model-judged clip's up to three key words are drawn in caption_highlight_color (burned captions) and marked <b> in the VTT; off: none"),
  zoom: z.enum(ZOOM_MODES).describe("emphasis: the picture pushes in briefly on each clip's moments of vocal emphasis (the clip's zooms list where); off: no zoom"),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi("SavedConfig");
export const ConfigList = z.object({ configs: z.array(SavedConfig), count: z.number().int() }).openapi("ConfigList");
/** A configuration as sent: every field has a default, so each may be left out. */
export const ConfigBody = ClipConfig;

export const Logo = z.object({
  content_type: z.enum(["image/png", "image/jpeg"]).describe("Judged from the image's bytes"),
  width: z.number().int(),
  height: z.number().int(),
  size_bytes: z.number().int(),
  sha256: z.string().describe("Hex SHA-256 of the image; also the ETag of GET /api/v1/logo/image"),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi("Logo");

export const Health = z.object({ ok: z.literal(true), service: z.string() }).openapi("Health");

export const Problem = z
  .object({
    type: z.string().describe("/docs/errors#<code>"),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
    request_id: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    active_job_id: z.string().optional(),
    allowed_values: z.array(z.string()).optional(),
  })
  .loose()
  .openapi("Problem");

export const PlatformCookies = z.object({
  platform: z.enum(PLATFORM_IDS),
  cookie_count: z.number().int().describe("Cookies kept: only the platform's own domains are stored"),
  size_bytes: z.number().int().describe("Size of the stored (filtered) file"),
  expires_at: Timestamp.nullable().describe("When the last of its cookies expires; null when all are session cookies"),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi("PlatformCookies");
export const PlatformCookiesList = z.object({ cookies: z.array(PlatformCookies) }).openapi("PlatformCookiesList");
