export { ClipjobsClient, DEFAULT_BASE_URL, EXPORT_FORMATS, IDEMPOTENCY_HEADER, isFinished } from "./client.ts";
export type {
  ClipConfig,
  ClipjobsClientOptions,
  ConfigList,
  CreateWebhookBody,
  Job,
  JobList,
  JobStatus,
  ListDeliveriesQuery,
  ListJobsQuery,
  SavedConfig,
  SubmitJobBody,
  SubmitJobResponse,
  Transcript,
  TranscriptTextFormat,
  ExportFormat,
  Usage,
  VideoTypes,
  WaitOptions,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookList,
  WebhookWithSecret,
} from "./client.ts";
export { ClipjobsError, type Problem } from "./errors.ts";
export { retryAfterMs, retryingFetch, type RetryOptions } from "./retry.ts";
export type { components, paths } from "./schema.ts";
export { uploadFile, type UploadedFile, type UploadFileOptions } from "./upload.ts";
