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
  FailureCode,
  HexColor,
  JUDGED_BY,
  LogoPosition,
  MAX_PROMPT_CHARS,
  REFRAME_USED,
  REMOVE_SILENCE_MODES,
  REMOVED_KINDS,
  SpeechLanguage,
  TranscriptSource,
  TRANSLATION_STATUSES,
  VIDEO_TYPES,
  VideoType,
} from "#contract";
import { ERROR_CODES, type ErrorCode } from "../http/errors";

const Timestamp = z.iso.datetime().describe("RFC 3339 timestamp, UTC");
const JobId = z.string().regex(/^job_[A-Za-z0-9]+$/).describe("`job_` + at least 80 random bits");

/*
 * Request bodies carry no component name, so the document writes them inline
 * under requestBody: generators (openapi-typescript) then read a field with a
 * default as optional, which is how the API takes it.
 */

/**
 * Validated for shape only: a bad URL or video type has its own error code
 * (invalid_video_url, invalid_video_type), given by the handler. The
 * document still names the values that succeed.
 */
export const SubmitJobBody = z.object({
  video_url: z
    .string()
    .optional()
    .openapi({ format: "uri", description: "http(s) URL of a video page or a direct video file. Exactly one of video_url and upload_id." }),
  upload_id: z
    .string()
    .optional()
    .describe("A complete upload (POST /api/v1/uploads) not used by another job; the title defaults to its file name. Exactly one of video_url and upload_id."),
  video_type: z.string().openapi({ enum: [...VIDEO_TYPES], description: "Analysis approach, see GET /api/v1/video-types" }),
  config_name: z.string().min(1).max(64).nullish().describe("A saved configuration; omitted or null: the defaults"),
  captions_url: z
    .string()
    .nullish()
    .openapi({ format: "uri", description: "An SRT or WebVTT file of the video's speech (same URL rules as video_url); used when no better transcript source exists" }),
  prompt: z
    .string()
    .max(MAX_PROMPT_CHARS)
    .regex(/\S/, { message: "prompt must contain a word" })
    .nullish()
    .describe(
      "Clip only moments whose words match this topic (any language the speech may be in); ranked by the match with the video type's signals. Omitted: the configuration's prompt; null: none. Needs a transcript (else the job fails prompt_needs_transcript).",
    ),
  time_range: z
    .object({ start_seconds: z.number(), end_seconds: z.number() })
    .strict()
    .nullish()
    .describe(
      "Analyse and clip only this part of the video, in seconds from its start; credits are charged on its length inside the video. 0 <= start_seconds < end_seconds, at least min_clip_seconds long (else 400 invalid_time_range); a range starting after the video ends fails the job time_range_outside_source, uncharged.",
    ),
  remove_silence: z
    .enum(REMOVE_SILENCE_MODES)
    .optional()
    .describe("Shorten pauses inside each clip: off, pauses (over 0.8 s become 0.4 s), tight (over 0.35 s become 0.15 s). Omitted: the configuration's."),
  remove_fillers: z
    .boolean()
    .optional()
    .describe("Cut filler words (um, uh, erm, ...) out of each clip, from the transcript's word times. Omitted: the configuration's."),
  language: SpeechLanguage.nullish().describe(
    "The spoken language (ISO 639-1), a hint passed to speech-to-text; overrides the configuration's. Omitted: the configuration's; null: detected.",
  ),
  caption_language: CaptionLanguage.nullish().describe(
    "Translate captions, sidecars and clip text into this language (ISO 639-1); cuts still follow the spoken sentences. Overrides the configuration's; null: the spoken language.",
  ),
}).refine((body) => (body.video_url === undefined) !== (body.upload_id === undefined), {
  path: ["video_url"],
  message: "Send exactly one of video_url and upload_id.",
  // Also when other members are wrong, so every problem is listed at once.
  when: (payload) => typeof payload.value === "object" && payload.value !== null,
});

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
};

export const ClipDetail = z.object({
  url: z.url(),
  thumbnail_url: z.url(),
  start_seconds: z.number(),
  end_seconds: z.number(),
  duration_seconds: z.number(),
  score: z.number().min(0).max(1),
  reasons: z.array(z.string()),
  width: z.number().int(),
  height: z.number().int(),
  reframe: z.enum(REFRAME_USED).describe("What the crop followed: faces, the region of most activity (no face found, or reframe=auto without faces), or the centre"),
  faces_count: z.number().int().min(0).describe("Most faces seen together in the clip; 0 when none were found or looked for (reframe=center)"),
  text: z.string().nullable().describe("The words spoken inside the clip; null without a transcript"),
  title: z.string().nullable().describe("A short line chosen from the clip's own words; null without a transcript"),
  captions: z
    .object({ vtt_url: z.url(), srt_url: z.url() })
    .nullable()
    .describe("WebVTT and SRT captions timed from the clip's start, on {cdn_url}; null when none were made"),
  captions_burned: z.boolean().describe("Captions are drawn into the picture"),
  prompt_match: z.number().min(0).max(1).nullable().describe("How well the clip's words match the job's prompt (0-1); null without a prompt"),
  removed: z
    .array(
      z.object({
        start_seconds: z.number(),
        end_seconds: z.number(),
        kind: z.enum(REMOVED_KINDS),
      }),
    )
    .describe("Pauses (silence) and filler words cut out of the clip, in seconds of the source; duration_seconds is the clip's real length after them"),
  scores: z
    .object({
      hook: z.number().int().min(0).max(100).describe("The first seconds make a viewer stay"),
      payoff: z.number().int().min(0).max(100).describe("It ends on a resolution, an answer or a punchline"),
      standalone: z.number().int().min(0).max(100).describe("It makes sense without what came before"),
      energy: z.number().int().min(0).max(100).describe("Energy and emotion"),
    })
    .nullable()
    .describe("A language model's sub-scores (0-100) from the clip's words; null when signals alone judged the clip"),
  judged_by: z.enum(JUDGED_BY).describe("model: a language model read the clip's words and ranked it with the signals (its reason is the first of `reasons`); signals: the signal heuristics alone (see the job's `judgement.fallback_reason`)"),
  description: z.string().nullable().describe("The post: one to three sentences for the clip, in its caption language, written by the model; null on signals"),
  hashtags: z.array(z.string()).max(5).describe("The post: up to 5 hashtags written by the model; [] on signals"),
}).openapi("ClipDetail");

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
