/**
 * GET /api/v1/jobs/:job_id/transcript[?format=json|vtt|srt|txt]: the words and
 * sentences, with times in source seconds, of a completed job's transcript
 * (stored in R2 by the engine), as JSON or rendered as subtitles or text.
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { TranscriptSentence, TranscriptSource, TranscriptWord } from "#contract";
import type { AppEnv } from "../http/app-env.ts";
import { AppError, ERROR_CODES, type ErrorCode } from "../http/errors.ts";
import { fieldErrors } from "../http/validate.ts";
import { readOwnTranscript } from "../jobs/transcript-read.ts";
import { TRANSCRIPT_RENDERINGS } from "../jobs/transcript-store.ts";

export const TRANSCRIPT_FORMATS = ["json", "vtt", "srt", "txt"] as const;

export const TranscriptDocument = z
  .object({
    job_id: z.string(),
    source: TranscriptSource.describe("Where the transcript came from: workers_ai, subtitle_track, platform_subtitles or captions_url"),
    language: z.string().nullable().describe("Spoken language (ISO 639-1) when known"),
    words: z.array(TranscriptWord).describe("Every word with its start and end, in seconds of the source"),
    sentences: z.array(TranscriptSentence),
  })
  .openapi("Transcript");

/** Problem codes this operation answers, besides those of every keyed route. */
export const TRANSCRIPT_ERRORS: readonly ErrorCode[] = ["invalid_request", "not_found", "transcript_not_found"];

/** Its own codes plus those of every keyed route (auth, rate limit, internal). */
const ROUTE_CODES: readonly ErrorCode[] = [...TRANSCRIPT_ERRORS, "unauthorized", "rate_limited", "internal_error", "service_unavailable"];

const problem = (status: number) => ({
  description: `Problem: ${ROUTE_CODES.filter((code) => ERROR_CODES[code].status === status).join(", ")}`,
  content: { "application/problem+json": { schema: z.object({ code: z.string() }).loose() } },
});

export const getTranscriptRoute = createRoute({
  operationId: "getTranscript",
  method: "get",
  path: "/{job_id}/transcript",
  summary: "Get a completed job's transcript: words and sentences with times, or WebVTT, SRT or plain text",
  request: {
    params: z.object({ job_id: z.string() }),
    query: z.object({
      format: z.enum(TRANSCRIPT_FORMATS).default("json").describe("json (default), vtt (WebVTT), srt (SubRip) or txt (one sentence per line)"),
    }),
  },
  responses: {
    200: {
      description: "The transcript",
      content: {
        "application/json": { schema: TranscriptDocument },
        "text/vtt": { schema: z.string() },
        "application/x-subrip": { schema: z.string() },
        "text/plain": { schema: z.string() },
      },
    },
    400: problem(400),
    401: problem(401),
    404: problem(404),
    429: problem(429),
    500: problem(500),
  },
});

export const transcript = new OpenAPIHono<AppEnv>({
  defaultHook: (result) => {
    if (!result.success) {
      throw new AppError("invalid_request", "The query string is invalid.", { errors: fieldErrors(result.error.issues) });
    }
  },
}).openapi(getTranscriptRoute, async (c) => {
  const { job_id: jobId } = c.req.valid("param");
  const { format } = c.req.valid("query");
  const { job, transcript: stored } = await readOwnTranscript(c.env, c.get("auth").accountId, jobId);
  c.header("Cache-Control", "private, max-age=300");
  if (format === "json") {
    return c.json({ job_id: job.id, ...stored }, 200);
  }
  const { contentType, render } = TRANSCRIPT_RENDERINGS[format];
  return c.body(render(stored), 200, { "Content-Type": contentType });
});
