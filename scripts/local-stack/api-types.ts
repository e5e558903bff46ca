/**
 * The public API's response shapes (SPEC sections 3, 4 and 6) as a client
 * sees them. Fields that depend on the job's status are optional here; the
 * end-to-end tests assert which ones each status carries.
 */
import { z } from "zod";

export const JobStatus = z.enum(["queued", "processing", "completed", "failed", "canceled"]);
export type JobStatus = z.infer<typeof JobStatus>;

export const ClipView = z.looseObject({
  url: z.string().url(),
  thumbnail_url: z.string().url(),
  start_seconds: z.number(),
  end_seconds: z.number(),
  duration_seconds: z.number(),
  score: z.number(),
  reasons: z.array(z.string()),
  width: z.number().int(),
  height: z.number().int(),
  /** A line from the clip's own words; null without a transcript. */
  title: z.string().nullable().optional(),
});
export type ClipView = z.infer<typeof ClipView>;

export const JobView = z.looseObject({
  job_id: z.string(),
  status: JobStatus,
  message: z.string().optional(),
  progress: z.number().int().optional(),
  step: z.string().optional(),
  title: z.string().nullable().optional(),
  clips_count: z.number().int().optional(),
  clip_urls: z.array(z.string()).optional(),
  clips: z.array(ClipView).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  video_url: z.string().nullable().optional(),
  upload_id: z.string().optional(),
  video_type: z.string().optional(),
  config_name: z.string().nullable().optional(),
  created_at: z.string().optional(),
  completed_at: z.string().nullable().optional(),
  source_duration_seconds: z.number().nullable().optional(),
  credits_charged: z.number().int().optional(),
});
export type JobView = z.infer<typeof JobView>;

export const Usage = z.looseObject({
  credits_remaining: z.number().int(),
  credits_total: z.number().int(),
  plan: z.string(),
});
export type Usage = z.infer<typeof Usage>;

export const Problem = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  code: z.string(),
  request_id: z.string(),
});
export type Problem = z.infer<typeof Problem>;

export const CreatedAccount = z.looseObject({
  account_id: z.string(),
  api_key: z.string(),
});
export type CreatedAccount = z.infer<typeof CreatedAccount>;

/** Statuses after which a job never changes again. */
export const FINAL_STATUSES: readonly JobStatus[] = ["completed", "failed", "canceled"];
