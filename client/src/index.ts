export { ClipjobsClient, DEFAULT_BASE_URL, IDEMPOTENCY_HEADER, isFinished } from "./client.ts";
export type { ClipConfig, ClipjobsClientOptions, ConfigList, Job, JobList, JobStatus, ListJobsQuery, SavedConfig, SubmitJobBody, SubmitJobResponse, Usage, VideoTypes, WaitOptions } from "./client.ts";
export { ClipjobsError, type Problem } from "./errors.ts";
export { retryAfterMs, retryingFetch, type RetryOptions } from "./retry.ts";
export type { components, paths } from "./schema.ts";
