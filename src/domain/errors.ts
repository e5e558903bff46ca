/**
 * The errors of the service's domain (jobs, uploads, webhooks, the fleet...):
 * a stable problem `code`, a message for the client and optional details, and
 * no HTTP. One module, src/http/errors.ts, maps each code to its status and
 * title, and src/http/problem.ts renders any DomainError as RFC 9457
 * problem+json; the MCP tools render the same document.
 */

/** Every problem code the service answers with (documented at /docs/errors). */
export const ERROR_CODE_NAMES = [
  "invalid_request",
  "invalid_video_url",
  "invalid_captions_url",
  "invalid_video_type",
  "invalid_time_range",
  "unknown_font",
  "invalid_color",
  "unsupported_language",
  "invalid_logo",
  "invalid_cookies",
  "cookies_too_large",
  "logo_too_large",
  "invalid_webhook_url",
  "invalid_webhook_event",
  "webhook_limit_reached",
  "unauthorized",
  "insufficient_credits",
  "not_found",
  "transcript_not_found",
  "active_job_limit",
  "job_not_cancelable",
  "job_not_deletable",
  "job_not_completed",
  "job_not_active",
  "webhook_disabled",
  "conflict",
  "payload_too_large",
  "unsupported_media_type",
  "range_not_satisfiable",
  "tus_version_unsupported",
  "upload_offset_mismatch",
  "upload_busy",
  "upload_incomplete",
  "upload_in_use",
  "upload_limit_reached",
  "upload_expired",
  "upload_too_large",
  "upload_chunk_too_large",
  "upload_length_exceeded",
  "config_not_found",
  "logo_not_uploaded",
  "idempotency_key_reused",
  "rate_limited",
  "internal_error",
  "transcription_failed",
  "translation_failed",
  "transcription_unavailable",
  "translation_unavailable",
  "embedding_failed",
  "embedding_unavailable",
  "ai_scope_exceeded",
  "completion_in_progress",
  "service_unavailable",
  "service_misconfigured",
  "invalid_clip_span",
  "invalid_word",
  "clip_edit_in_progress",
  "clip_limit",
  "source_expired",
] as const;

export type ErrorCode = (typeof ERROR_CODE_NAMES)[number];

/** One invalid field of a request, by its path. */
export interface FieldError {
  path: string;
  message: string;
}

export interface DomainErrorDetails {
  /** Each invalid field, by path. */
  errors?: FieldError[];
  /** Extra members of the problem document, e.g. `active_job_id`. */
  extra?: Record<string, unknown>;
  /**
   * Protocol headers the answer carries: `Retry-After` for a transient
   * failure, tus's `Upload-Offset` for an upload refused mid-way.
   */
  headers?: Record<string, string>;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly errors?: FieldError[];
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, detail: string, details: DomainErrorDetails = {}) {
    super(detail);
    this.name = "DomainError";
    this.code = code;
    this.errors = details.errors;
    this.extra = details.extra;
    this.headers = details.headers;
  }
}
