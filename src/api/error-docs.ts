import { Hono } from "hono";
import { FAILURE_CODES } from "../engine/contract";
import type { AppEnv } from "../http/app-env";
import { ERROR_CODES, type ErrorCode } from "../http/errors";

/** When each problem code is answered; the anchors are the problem `type` URIs. */
export const ERROR_CODE_MEANINGS: Record<ErrorCode, string> = {
  invalid_request: "Malformed JSON, missing or mistyped fields, or bad values. `errors` lists each problem by path.",
  invalid_video_url: "The video URL is not http(s), carries credentials, or points at a private, loopback or link-local host.",
  invalid_captions_url: "`captions_url` breaks the same rules as `video_url`: not http(s), carries credentials, or points at a private host.",
  invalid_video_type: "`video_type` is not one of the supported values (see GET /api/v1/video-types).",
  unauthorized: "Missing, malformed, unknown or revoked API key (or operator token on /admin).",
  insufficient_credits: "No credits left in the current period.",
  not_found: "Unknown route, or a resource that does not exist or belongs to another account.",
  transcript_not_found:
    "The job has no transcript: it has not completed, no transcript source was usable (see the job's `transcript_unavailable_reason`), or it was deleted.",
  active_job_limit: "The account already has its maximum of queued or processing jobs; `active_job_id` names one.",
  job_not_cancelable: "Only queued or processing jobs can be canceled.",
  job_not_deletable: "Only finished (completed, failed or canceled) jobs can be deleted.",
  job_not_active: "Engine channel only: the job is no longer processing; the engine must stop.",
  conflict: "The request conflicts with the current state, e.g. an email already in use.",
  payload_too_large: "The request body is over 16 KiB (engine channel: over the upload's own limit).",
  unsupported_media_type: "Request bodies must be Content-Type: application/json.",
  range_not_satisfiable: "A /cdn/ Range request starts beyond the end of the object (Content-Range gives its size).",
  config_not_found: "`config_name` names no saved configuration of this account.",
  idempotency_key_reused: "The Idempotency-Key was used within 24 hours with a different request body.",
  rate_limited: "Over the rolling per-minute request window; retry after `Retry-After` seconds.",
  internal_error: "Something unexpected failed on our side; quote the request_id when reporting it.",
  transcription_failed:
    "Engine channel only: Workers AI speech-to-text kept failing after the Worker's retries; the engine goes on without that audio.",
  service_unavailable: "A dependency is temporarily unavailable; retry later.",
  transcription_unavailable:
    "Engine channel only: this deployment has no Workers AI binding (local development); the engine uses the other transcript sources.",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function renderPage(): string {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[])
    .map(
      (code) =>
        `<tr id="${code}"><td><code>${code}</code></td><td>${ERROR_CODES[code].status}</td><td>${escapeHtml(ERROR_CODE_MEANINGS[code])}</td></tr>`,
    )
    .join("\n");
  const failures = FAILURE_CODES.map((code) => `<li id="job-${code}"><code>${code}</code></li>`).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>clipjobs errors</title></head>
<body>
<h1>Errors</h1>
<p>Every error is <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>,
<code>status</code>, <code>detail</code>, <code>code</code> and <code>request_id</code>; validation errors add
<code>errors: [{path, message}]</code>.</p>
<table><thead><tr><th>code</th><th>status</th><th>meaning</th></tr></thead><tbody>
${rows}
</tbody></table>
<h2>Job failure codes</h2>
<p>A failed job carries one of these in <code>error.code</code>:</p>
<ul>
${failures}
</ul>
</body></html>`;
}

export const errorDocs = new Hono<AppEnv>().get("/", (c) => {
  c.header("Cache-Control", "public, max-age=3600");
  return c.html(renderPage());
});
