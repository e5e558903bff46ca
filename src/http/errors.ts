/**
 * The one error path of the API (SPEC section 6): every failure is an AppError,
 * rendered by app.onError as RFC 9457 problem+json with a stable `code`.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, title: "Invalid request" },
  invalid_video_url: { status: 400, title: "Invalid video URL" },
  invalid_video_type: { status: 400, title: "Invalid video type" },
  invalid_captions_url: { status: 400, title: "Invalid captions URL" },
  unauthorized: { status: 401, title: "Unauthorized" },
  insufficient_credits: { status: 402, title: "Insufficient credits" },
  not_found: { status: 404, title: "Not found" },
  transcript_not_found: { status: 404, title: "Transcript not found" },
  active_job_limit: { status: 409, title: "Active job limit reached" },
  job_not_cancelable: { status: 409, title: "Job not cancelable" },
  job_not_deletable: { status: 409, title: "Job not deletable" },
  job_not_active: { status: 409, title: "Job not active" },
  conflict: { status: 409, title: "Conflict" },
  payload_too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  range_not_satisfiable: { status: 416, title: "Range not satisfiable" },
  config_not_found: { status: 422, title: "Configuration not found" },
  idempotency_key_reused: { status: 422, title: "Idempotency key reused" },
  rate_limited: { status: 429, title: "Too many requests" },
  internal_error: { status: 500, title: "Internal error" },
  transcription_failed: { status: 502, title: "Transcription failed" },
  service_unavailable: { status: 503, title: "Service unavailable" },
  transcription_unavailable: { status: 503, title: "Transcription unavailable" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors?: FieldError[];
  /** Extra members of the problem document, e.g. `active_job_id`. */
  readonly extra?: Record<string, unknown>;
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail: string,
    options: { errors?: FieldError[]; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.errors = options.errors;
    this.extra = options.extra;
    this.headers = options.headers;
  }
}

/** `type` is a relative URI: the Worker serves the error reference at /docs/errors. */
export const PROBLEM_TYPE_BASE = "/docs/errors#";

export function problemBody(err: AppError, requestId: string): Record<string, unknown> {
  return {
    type: PROBLEM_TYPE_BASE + err.code,
    title: ERROR_CODES[err.code].title,
    status: err.status,
    detail: err.message,
    code: err.code,
    request_id: requestId,
    ...(err.errors ? { errors: err.errors } : {}),
    ...(err.extra ?? {}),
  };
}
