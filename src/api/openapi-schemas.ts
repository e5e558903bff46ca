/**
 * zod descriptions of the public API's request and response bodies, used to
 * build the OpenAPI document (z.toJSONSchema). Shapes follow SPEC section 3.
 */
import { z } from "zod";
import { ClipConfig, FailureCode, TranscriptSource, VideoType } from "../engine/contract";
import { ERROR_CODES, type ErrorCode } from "../http/errors";

const Timestamp = z.iso.datetime().describe("RFC 3339 timestamp, UTC");
const JobId = z.string().regex(/^job_[A-Za-z0-9]+$/).describe("`job_` + at least 80 random bits");

export const SubmitJobBody = z.object({
  video_url: z.url().describe("http(s) URL of a video page or a direct video file"),
  video_type: VideoType.describe("Analysis approach, see GET /api/v1/video-types"),
  config_name: z.string().optional().describe("A saved configuration; omitted: the defaults"),
  captions_url: z
    .url()
    .nullable()
    .optional()
    .describe("An SRT or WebVTT file of the video's speech (same URL rules as video_url); used when no better transcript source exists"),
});

export const SubmitJobResponse = z.object({
  job_id: JobId,
  status: z.literal("queued"),
  message: z.string(),
  created_at: Timestamp.optional(),
});

const JobCommon = {
  job_id: JobId,
  video_url: z.string(),
  video_type: VideoType,
  config_name: z.string().nullable(),
  captions_url: z.string().nullable(),
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
  text: z.string().nullable().describe("The words spoken inside the clip; null without a transcript"),
  title: z.string().nullable().describe("A short line chosen from the clip's own words; null without a transcript"),
  captions: z
    .object({ vtt_url: z.url(), srt_url: z.url() })
    .nullable()
    .describe("WebVTT and SRT captions timed from the clip's start, on {cdn_url}; null when none were made"),
  captions_burned: z.boolean().describe("Captions are drawn into the picture"),
});

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
export const Job = z.discriminatedUnion("status", [ActiveJob, CompletedJob, FailedJob, CanceledJob]);

export const JobListItem = z
  .object({
    job_id: JobId,
    status: z.enum(["queued", "processing", "completed", "failed", "canceled"]),
    title: z.string().nullable(),
    clips_count: z.number().int(),
    clip_urls: z.array(z.url()),
    created_at: Timestamp,
  })
  .loose();
export const JobList = z.object({
  jobs: z.array(JobListItem),
  count: z.number().int(),
  next_cursor: z.string().nullable(),
});

export const Usage = z.object({
  credits_remaining: z.number().int(),
  credits_total: z.number().int().describe("The plan's credits for the period"),
  plan: z.string(),
  credits_granted: z.number().int(),
  credits_used: z.number().int(),
  credits_reserved: z.number().int(),
  period_start: Timestamp,
  period_end: Timestamp,
});

export const VideoTypes = z.object({
  video_types: z.array(z.object({ value: VideoType, description: z.string() })),
  default: VideoType,
});

export const SavedConfig = z.object({
  name: z.string(),
  aspect_ratio: z.string(),
  resolution: z.number().int(),
  min_clip_seconds: z.number().int(),
  max_clip_seconds: z.number().int(),
  max_clips: z.number().int(),
  reframe: z.string(),
  captions: z.string(),
  caption_style: z.string(),
  caption_position: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const ConfigList = z.object({ configs: z.array(SavedConfig), count: z.number().int() });
export const ConfigBody = ClipConfig;

export const Health = z.object({ ok: z.literal(true), service: z.string() });

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
  .loose();
