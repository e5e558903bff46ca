/**
 * The one error path of the API (SPEC section 6): every failure is a
 * DomainError (src/domain/errors.ts) or, raised by routes and middleware, an
 * AppError, rendered by app.onError as RFC 9457 problem+json with a stable
 * `code`. This table is the one map of codes to HTTP: each code's status,
 * title and meaning. /docs/errors renders it and the OpenAPI document's
 * Problem schema and problem responses are built from it.
 */
import { DomainError, type DomainErrorDetails, type ErrorCode, type FieldError } from "../domain/errors.ts";

export type { ErrorCode, FieldError };

interface ProblemDoc {
  status: number;
  title: string;
  meaning: string;
}

export const ERROR_CODES = {
  invalid_request: {
    status: 400,
    title: "Invalid request",
    meaning: "Malformed JSON, missing or mistyped fields, or bad values. `errors` lists each problem by path.",
  },
  invalid_video_url: {
    status: 400,
    title: "Invalid video URL",
    meaning: "The video URL is not http(s), carries credentials, or points at a private, loopback or link-local host.",
  },
  invalid_captions_url: {
    status: 400,
    title: "Invalid captions URL",
    meaning: "`captions_url` breaks the same rules as `video_url`: not http(s), carries credentials, or points at a private host.",
  },
  invalid_video_type: {
    status: 400,
    title: "Invalid video type",
    meaning: "`video_type` is not one of the supported values (see GET /api/v1/video-types).",
  },
  invalid_time_range: {
    status: 400,
    title: "Invalid time range",
    meaning:
      "`time_range` is not `{start_seconds, end_seconds}` with 0 <= start < end, is shorter than the configuration's `min_clip_seconds`, or ends after the longest source the service takes (MAX_SOURCE_SECONDS).",
  },
  unknown_font: {
    status: 400,
    title: "Unknown font",
    meaning:
      "`caption_font` is not one of the installed caption fonts (`allowed_values` lists them).",
  },
  invalid_color: {
    status: 400,
    title: "Invalid colour",
    meaning: "A colour (`caption_color`, `caption_highlight_color`, `caption_outline_color`, `caption_box_color`) is not written `#RRGGBB`.",
  },
  unsupported_language: {
    status: 400,
    title: "Unsupported language",
    meaning:
      "`language` or `caption_language` is not a supported ISO 639-1 code (`language`: the speech-to-text model's languages; `caption_language`: the translation model's). `allowed_values` lists them.",
  },
  invalid_logo: {
    status: 400,
    title: "Invalid logo",
    meaning: "The logo is not a complete PNG or JPEG image (judged by its bytes), or a side of it is over 1024 pixels.",
  },
  invalid_cookies: {
    status: 422,
    title: "Invalid cookies file",
    meaning:
      "The cookies file is not in the Netscape (cookies.txt) format, or none of its cookies is for the platform it is stored for.",
  },
  cookies_too_large: {
    status: 413,
    title: "Cookies file too large",
    meaning: "The cookies file is over 100 KiB.",
  },
  logo_too_large: {
    status: 413,
    title: "Logo too large",
    meaning: "The logo is over 1 MiB (1,048,576 bytes).",
  },
  invalid_webhook_url: {
    status: 400,
    title: "Invalid webhook URL",
    meaning:
      "The webhook `url` is not a valid absolute URL, is not https, carries credentials, or points at a private, loopback, link-local or metadata host.",
  },
  invalid_webhook_event: {
    status: 400,
    title: "Invalid webhook event",
    meaning: "`events` is neither \"*\" nor a non-empty list of known event types (job.queued, job.processing, job.completed, job.failed, job.canceled, clip.updated, clip.created).",
  },
  webhook_limit_reached: {
    status: 400,
    title: "Webhook limit reached",
    meaning: "The account already has its maximum of 10 webhook endpoints; delete one first (`limit` says how many).",
  },
  invalid_clip_span: {
    status: 400,
    title: "Invalid clip span",
    meaning:
      "A clip edit's or new clip's span: an end at or before its start, a span outside the source, or a length outside the job's `min_clip_seconds`..`max_clip_seconds`.",
  },
  invalid_word: {
    status: 400,
    title: "Invalid word",
    meaning: "A caption correction names a word index outside the clip's `words`, or a time at which no word starts (within 0.05 s).",
  },
  unauthorized: {
    status: 401,
    title: "Unauthorized",
    meaning: "Missing, malformed, unknown or revoked API key (or operator token on /admin).",
  },
  insufficient_credits: {
    status: 402,
    title: "Insufficient credits",
    meaning: "No credits left in the current period.",
  },
  not_found: {
    status: 404,
    title: "Not found",
    meaning: "Unknown route, or a resource that does not exist or belongs to another account.",
  },
  transcript_not_found: {
    status: 404,
    title: "Transcript not found",
    meaning:
      "The job has no transcript: it has not completed, no transcript source was usable (see the job's `transcript_unavailable_reason`), or it was deleted.",
  },
  active_job_limit: {
    status: 409,
    title: "Active job limit reached",
    meaning: "The account already has its maximum of queued or processing jobs; `active_job_id` names one.",
  },
  job_not_cancelable: {
    status: 409,
    title: "Job not cancelable",
    meaning: "Only queued or processing jobs can be canceled.",
  },
  job_not_deletable: {
    status: 409,
    title: "Job not deletable",
    meaning: "Only finished (completed, failed or canceled) jobs can be deleted.",
  },
  job_not_completed: {
    status: 409,
    title: "Job not completed",
    meaning: "The job is queued, processing, failed or canceled: only a completed job has clips to export or edit.",
  },
  clip_edit_in_progress: {
    status: 409,
    title: "Clip edit in progress",
    meaning: "The clip's previous edit is still queued or rendering; GET the clip and edit it once its `edit` is null or failed.",
  },
  clip_limit: {
    status: 409,
    title: "Clip limit reached",
    meaning: "The job already has its maximum of 20 clips (its own and those cut after it).",
  },
  job_not_active: {
    status: 409,
    title: "Job not active",
    meaning: "Engine channel only: the job is no longer processing; the engine must stop.",
  },
  webhook_disabled: {
    status: 409,
    title: "Webhook disabled",
    meaning:
      "The webhook endpoint is disabled (by its owner, after a 410, or after about three days of failures); enable it before sending to it.",
  },
  conflict: {
    status: 409,
    title: "Conflict",
    meaning: "The request conflicts with the current state, e.g. an email already in use.",
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    meaning:
      "The request body is over its route's limit: 16 KiB for JSON bodies and dashboard forms, 64 KiB for MCP messages, the engine channel's own limits for its uploads. Sent with or without Content-Length, it is refused the same way and nothing is stored.",
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    meaning: "Request bodies must be Content-Type: application/json (upload PATCH bodies: application/offset+octet-stream).",
  },
  range_not_satisfiable: {
    status: 416,
    title: "Range not satisfiable",
    meaning: "A /cdn/ Range request starts beyond the end of the object (Content-Range gives its size).",
  },
  tus_version_unsupported: {
    status: 412,
    title: "Unsupported tus version",
    meaning:
      "Uploads: the request's `Tus-Resumable` header is missing or not `1.0.0` (`Tus-Version` lists what is supported).",
  },
  upload_offset_mismatch: {
    status: 409,
    title: "Upload offset mismatch",
    meaning:
      "Uploads: the PATCH's `Upload-Offset` is not the upload's current offset (`offset` gives it; HEAD, then resume there), or the upload is already complete.",
  },
  upload_busy: {
    status: 409,
    title: "Upload busy",
    meaning:
      "Uploads: another PATCH to this upload is still being received; retry after it ends (HEAD gives the offset).",
  },
  upload_incomplete: {
    status: 409,
    title: "Upload incomplete",
    meaning:
      "`upload_id` names an upload that has not received all its bytes yet.",
  },
  upload_in_use: {
    status: 409,
    title: "Upload in use",
    meaning:
      "The upload is the source of another job (queued or processing), or DELETE of an upload a job has taken.",
  },
  upload_limit_reached: {
    status: 409,
    title: "Upload limit reached",
    meaning:
      "Uploads: the account already holds as many open uploads (created and not yet deleted), or as many bytes of them together, as its plan allows: `max_open_uploads`, `max_open_upload_bytes`, `open_uploads` and `open_upload_bytes` say how many. Delete an upload, or use one in a job (it is deleted when the job ends).",
  },
  upload_expired: {
    status: 410,
    title: "Upload expired",
    meaning:
      "Uploads: the upload was not used by a job within 24 hours of its creation and was deleted.",
  },
  source_expired: {
    status: 410,
    title: "Source expired",
    meaning: "An edit of an upload job whose kept source is gone (its keeping period passed, or it was released to keep the account within its plan's `max_kept_source_bytes`): an upload cannot be fetched again. Submit the file again as a new job.",
  },
  upload_too_large: {
    status: 413,
    title: "Upload too large",
    meaning:
      "Uploads: `Upload-Length` is over the plan's limit (`max_size`, also `Tus-Max-Size` of OPTIONS).",
  },
  upload_chunk_too_large: {
    status: 413,
    title: "Upload chunk too large",
    meaning:
      "Uploads: a PATCH body is over 50 MiB; send the file in chunks of at most 50 MiB. Bytes up to the limit are kept.",
  },
  upload_length_exceeded: {
    status: 413,
    title: "Upload length exceeded",
    meaning:
      "Uploads: the PATCH would go past the upload's `Upload-Length`. Nothing of it is stored: the offset stays where it was, also for a body sent without Content-Length.",
  },
  config_not_found: {
    status: 422,
    title: "Configuration not found",
    meaning: "`config_name` names no saved configuration of this account.",
  },
  logo_not_uploaded: {
    status: 422,
    title: "Logo not uploaded",
    meaning: "The configuration places a logo (`logo_position` is not `off`) but the account has none: upload it with PUT /api/v1/logo first.",
  },
  idempotency_key_reused: {
    status: 422,
    title: "Idempotency key reused",
    meaning: "The Idempotency-Key was used within 24 hours with a different request body.",
  },
  rate_limited: {
    status: 429,
    title: "Too many requests",
    meaning:
      "Over the rolling per-minute request window: the account's, or (for requests without a valid API key) the client address's; retry after `Retry-After` seconds.",
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    meaning: "Something unexpected failed on our side; quote the request_id when reporting it.",
  },
  transcription_failed: {
    status: 502,
    title: "Transcription failed",
    meaning:
      "Engine channel only: Workers AI speech-to-text kept failing after the Worker's retries; the engine goes on without that audio.",
  },
  translation_failed: {
    status: 502,
    title: "Translation failed",
    meaning:
      "Engine channel only: Workers AI translation kept failing after the Worker's retries; the job's captions stay in the spoken language.",
  },
  transcription_unavailable: {
    status: 503,
    title: "Transcription unavailable",
    meaning:
      "Engine channel only: this deployment has no Workers AI binding (local development); the engine uses the other transcript sources.",
  },
  translation_unavailable: {
    status: 503,
    title: "Translation unavailable",
    meaning:
      "Engine channel only: this deployment has no Workers AI binding (local development); the job's captions stay in the spoken language.",
  },
  embedding_failed: {
    status: 502,
    title: "Embedding failed",
    meaning:
      "Engine channel only: Workers AI text embeddings kept failing after the Worker's retries; the engine matches the prompt by words instead.",
  },
  embedding_unavailable: {
    status: 503,
    title: "Embedding unavailable",
    meaning:
      "Engine channel only: this deployment has no Workers AI binding (local development); the engine matches the prompt by words instead.",
  },
  ai_scope_exceeded: {
    status: 403,
    title: "Outside the job's Workers AI allowance",
    meaning:
      "Engine channel only: the request would spend Workers AI on something other than its own job: translation into a language other than the job's `caption_language`, prompt matching for a query other than the job's `prompt`, or more audio than the job's source (plus the chunks' overlap and TRANSCRIBE_MARGIN_SECONDS). The engine goes on without it.",
  },
  completion_in_progress: {
    status: 503,
    title: "Completion in progress",
    meaning:
      "Engine channel only: the job's clips are still being published (large clips take more than one call); the engine sends the same completion again.",
  },
  service_unavailable: {
    status: 503,
    title: "Service unavailable",
    meaning:
      "A dependency is temporarily unavailable (storage, or the platform restarting or moving one of the service's objects, as during a deploy); retry after `Retry-After` seconds (a submission retried with the same Idempotency-Key never makes a second job).",
  },
  service_misconfigured: {
    status: 503,
    title: "Service misconfigured",
    meaning:
      "The operator's configuration stops the service from running jobs (e.g. a missing or weak engine signing key or callback token secret); nothing was created. Retry later.",
  },
} as const satisfies Record<ErrorCode, ProblemDoc>;

/** The HTTP status a problem code is answered with. */
export function problemStatus(err: DomainError): number {
  return ERROR_CODES[err.code].status;
}

/** An error raised by a route or middleware: a DomainError that knows its HTTP status. */
export class AppError extends DomainError {
  readonly status: number;

  constructor(code: ErrorCode, detail: string, details: DomainErrorDetails = {}) {
    super(code, detail, details);
    this.name = "AppError";
    this.status = ERROR_CODES[code].status;
  }
}

/** `type` is a relative URI: the Worker serves the error reference at /docs/errors. */
export const PROBLEM_TYPE_BASE = "/docs/errors#";

export function problemBody(err: DomainError, requestId: string): Record<string, unknown> {
  return {
    type: PROBLEM_TYPE_BASE + err.code,
    title: ERROR_CODES[err.code].title,
    status: problemStatus(err),
    detail: err.message,
    code: err.code,
    request_id: requestId,
    ...(err.errors ? { errors: err.errors } : {}),
    ...(err.extra ?? {}),
  };
}
