/**
 * GET /api/v1/jobs/:job_id/export?format=fcpxml|edl|otio|mlt: a completed
 * job's clips as an editor's timeline against the source (docs/editing.md
 * says what each format carries).
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env.ts";
import { AppError, ERROR_CODES, type ErrorCode } from "../http/errors.ts";
import { fieldErrors } from "../http/validate.ts";
import { EXPORT_FORMATS } from "../jobs/export/index.ts";
import { exportOwnJob } from "../jobs/export/read.ts";

/** Problem codes this operation answers, besides those of every keyed route. */
export const EXPORT_ERRORS: readonly ErrorCode[] = ["invalid_request", "not_found", "job_not_completed"];

const ROUTE_CODES: readonly ErrorCode[] = [...EXPORT_ERRORS, "unauthorized", "rate_limited", "internal_error", "service_unavailable"];

const problem = (status: number) => ({
  description: `Problem: ${ROUTE_CODES.filter((code) => ERROR_CODES[code].status === status).join(", ")}`,
  content: { "application/problem+json": { schema: z.object({ code: z.string() }).loose() } },
});

export const exportJobRoute = createRoute({
  operationId: "exportJob",
  method: "get",
  path: "/{job_id}/export",
  summary: "Export a completed job's clips as an editor timeline against the source: FCPXML, CMX 3600 EDL, OpenTimelineIO or MLT",
  description:
    "One timeline with every clip, end to end, as spans of the source (a clip with removed pauses is one span per kept stretch), " +
    "with the source's URL (or an upload's file name), each span's in and out in the source's frames, the crop (keyframed where the camera moves: " +
    "FCPXML position keyframes, MLT affine rectangles, OTIO metadata; an EDL carries none) and the clip's caption sidecar URLs. " +
    "An unknown format is 400 invalid_request; another account's or a deleted job is 404 not_found; a job that is not completed is 409 job_not_completed.",
  request: {
    params: z.object({ job_id: z.string() }),
    query: z.object({
      format: z.enum(EXPORT_FORMATS).describe("fcpxml (Final Cut Pro 1.10, DaVinci Resolve), edl (CMX 3600: Premiere, Resolve), otio (OpenTimelineIO JSON) or mlt (Shotcut, Kdenlive, melt)"),
    }),
  },
  responses: {
    200: {
      description: "The timeline, as an attachment named {job_id}.{format}",
      content: {
        "application/xml": { schema: z.string() },
        "text/plain": { schema: z.string() },
        "application/json": { schema: z.string() },
      },
    },
    400: problem(400),
    401: problem(401),
    404: problem(404),
    409: problem(409),
    429: problem(429),
    500: problem(500),
  },
});

export const exportCut = new OpenAPIHono<AppEnv>({
  defaultHook: (result) => {
    if (!result.success) {
      throw new AppError("invalid_request", "The query string is invalid.", { errors: fieldErrors(result.error.issues) });
    }
  },
}).openapi(exportJobRoute, async (c) => {
  const { job_id: jobId } = c.req.valid("param");
  const { format } = c.req.valid("query");
  const cut = await exportOwnJob(c.env, c.get("auth").accountId, jobId, format, new URL(c.req.url).origin);
  return c.body(cut.body, 200, {
    "Content-Type": cut.contentType,
    "Content-Disposition": `attachment; filename="${cut.fileName}"`,
    "Cache-Control": "private, max-age=60",
  });
});
