import { Hono } from "hono";
import { FAILURE_CODES } from "#contract";
import type { AppEnv } from "../http/app-env.ts";
import { ERROR_CODES, type ErrorCode } from "../http/errors.ts";

/** What each job failure code (`error.code` of a failed job) means. */
export const FAILURE_CODE_MEANINGS: Partial<Record<(typeof FAILURE_CODES)[number], string>> = {
  source_sign_in_required:
    "The video platform asked for a signed-in session (for YouTube often \"Sign in to confirm you're not a bot\", which it answers to data-centre addresses). The message quotes the platform. Storing a cookies file for that platform (PUT /api/v1/cookies/{platform}) lets later jobs sign in. Nothing was charged.",
  source_private: "The platform says the video is private; the message quotes it. Nothing was charged.",
  source_unavailable: "The platform says the video was removed or is unavailable; the message quotes it. Nothing was charged.",
  source_geo_blocked:
    "The platform does not show the video in the country the engine downloads from; the message quotes it. An operator can route platform downloads through a proxy elsewhere (PLATFORM_PROXY_URL). Nothing was charged.",
  source_age_restricted:
    "The platform asks the viewer to confirm their age; a cookies file of an account allowed to watch it lets the download through. Nothing was charged.",
  source_live: "The video is a live event or premiere that has not begun yet; submit it again once it has ended. Nothing was charged.",
  queue_timeout:
    "No clip engine became free within MAX_QUEUE_SECONDS of submission (24 hours by default). Nothing was charged; submit again.",
  processing_timeout: "The clip engine stopped reporting progress; nothing was charged.",
  internal_error: "Something failed on our side (for example the engine could not be started); nothing was charged.",
  no_clips_found:
    "Nothing in the video (or its time_range) was worth a clip; with a prompt, no moment's words matched it (the message says which). Nothing was charged.",
  prompt_needs_transcript:
    "The job has a prompt, but no transcript could be had for the video (no speech-to-text, subtitle track, platform subtitles or captions_url), so nothing can be matched against it. Nothing was charged; submit without the prompt or with a captions_url.",
  time_range_outside_source:
    "time_range starts at or after the end of the video, or what is left of it inside the video is shorter than min_clip_seconds. Found after the probe; nothing was charged.",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function renderPage(): string {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[])
    .map(
      (code) =>
        `<tr id="${code}"><td><code>${code}</code></td><td>${ERROR_CODES[code].status}</td><td>${escapeHtml(ERROR_CODES[code].meaning)}</td></tr>`,
    )
    .join("\n");
  const failures = FAILURE_CODES.map((code) => {
    const meaning = FAILURE_CODE_MEANINGS[code];
    return `<li id="job-${code}"><code>${code}</code>${meaning ? `: ${escapeHtml(meaning)}` : ""}</li>`;
  }).join("\n");
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
