/**
 * zod descriptions of the public API's request and response bodies, used to
 * build the OpenAPI document (z.toJSONSchema). Shapes follow SPEC section 3.
 */
import { z } from "zod";
import { ClipConfig, FailureCode, VideoType } from "../engine/contract";
import { ERROR_CODES, type ErrorCode } from "../http/errors";

const Timestamp = z.iso.datetime().describe("RFC 3339 timestamp, UTC");
const JobId = z.string().regex(/^job_[A-Za-z0-9]+$/).describe("`job_` + at least 80 random bits");

export const SubmitJobBody = z.object({
  video_url: z.url().optional().describe("http(s) URL of a video page or a direct video file. Exactly one of video_url and upload_id."),
  upload_id: z
    .string()
    .optional()
    .describe("A complete upload (POST /api/v1/uploads) not used by another job; the title defaults to its file name. Exactly one of video_url and upload_id."),
  video_type: VideoType.describe("Analysis approach, see GET /api/v1/video-types"),
  config_name: z.string().optional().describe("A saved configuration; omitted: the defaults"),
});

export const SubmitJobResponse = z.object({
  job_id: JobId,
  status: z.literal("queued"),
  message: z.string(),
  created_at: Timestamp.optional(),
});

const JobCommon = {
  job_id: JobId,
  video_url: z.string().nullable().describe("null for a job made from an upload"),
  upload_id: z.string().optional().describe("The upload the job was made from (deleted when the job ends)"),
  video_type: VideoType,
  config_name: z.string().nullable(),
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
