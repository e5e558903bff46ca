/**
 * One clip of a completed job (docs/editing.md): read it, edit it (a new
 * version rendered from the source), or cut a new one from the source.
 */
import { z } from "@hono/zod-openapi";
import { apiApp, apiRoute, BODY_ERRORS, jsonContent } from "../http/api-app.ts";
import type { ErrorCode } from "../http/errors.ts";
import { ClipAddBody, ClipEditBody } from "../jobs/clip-edit/contract.ts";
import { addClip, ClipAnswer, editClip, readClip } from "../jobs/clip-edit/service.ts";

const JobParam = z.object({
  job_id: z.string().openapi({ param: { name: "job_id", in: "path" }, example: "job_7mQ2x9KfT4vLp8sRz3Wc" }),
});

const ClipParams = JobParam.extend({
  // Decimal digits only: coercion alone would read " " or "0x1" as an index.
  index: z
    .string()
    .regex(/^\d{1,2}$/)
    .transform(Number)
    .pipe(z.number().int().min(0).max(19))
    .openapi({ param: { name: "index", in: "path" }, type: "integer", minimum: 0, maximum: 19, example: 0 }),
});

/** What an edit or a new clip answers besides the body's own checks. */
export const CLIP_EDIT_ERRORS: readonly ErrorCode[] = [
  "invalid_clip_span",
  "invalid_word",
  "not_found",
  "job_not_completed",
  "clip_edit_in_progress",
  "active_job_limit",
  "insufficient_credits",
  "source_expired",
];

const readRoute = apiRoute(
  {
    method: "get",
    path: "/{job_id}/clips/{index}",
    summary: "Get one clip of a completed job, with its version, its pending edit and its caption words",
    operationId: "getClip",
    request: { params: ClipParams },
    responses: { 200: { description: "The clip", content: jsonContent(ClipAnswer) } },
  },
  { errors: ["invalid_request", "not_found", "job_not_completed"] },
);

const editRoute = apiRoute(
  {
    method: "patch",
    path: "/{job_id}/clips/{index}",
    summary: "Edit a clip: a new span, caption corrections, a title or per-clip overrides, rendered again as a new version",
    description:
      "Accepted with 202: the clip's `edit` is queued, then rendering; once the new version is published the clip's `version` goes up by one, " +
      "its URLs are new and the previous version's stop answering (after at most the CDN cache time, 5 minutes), and a `clip.updated` webhook event is sent. " +
      "A failed render leaves the published version as it was (`edit.status` failed, credits given back). " +
      "Costs one credit per started minute of the new clip, reserved now.",
    operationId: "editClip",
    request: { params: ClipParams, body: { required: true, content: jsonContent(ClipEditBody) } },
    responses: { 202: { description: "The clip as published, with its queued edit", content: jsonContent(ClipAnswer) } },
  },
  { errors: [...BODY_ERRORS, ...CLIP_EDIT_ERRORS] },
);

const addRoute = apiRoute(
  {
    method: "post",
    path: "/{job_id}/clips",
    summary: "Cut a new clip from a completed job's source",
    description:
      "Accepted with 202: the new clip takes the job's next index and reads `version: 0` (no links) until its render is published " +
      "(then version 1 and a `clip.created` webhook event). Costs one credit per started minute of the clip, reserved now.",
    operationId: "addClip",
    request: { params: JobParam, body: { required: true, content: jsonContent(ClipAddBody) } },
    responses: { 202: { description: "The new clip, queued", content: jsonContent(ClipAnswer) } },
  },
  { errors: [...BODY_ERRORS, ...CLIP_EDIT_ERRORS, "clip_limit"] },
);

export const clips = apiApp()
  .openapi(readRoute, async (c) => {
    const { job_id: jobId, index } = c.req.valid("param");
    return c.json(await readClip(c.env, c.get("auth").accountId, jobId, index), 200);
  })
  .openapi(editRoute, async (c) => {
    const { job_id: jobId, index } = c.req.valid("param");
    return c.json(await editClip(c.env, c.get("auth"), jobId, index, c.req.valid("json")), 202);
  })
  .openapi(addRoute, async (c) => c.json(await addClip(c.env, c.get("auth"), c.req.valid("param").job_id, c.req.valid("json")), 202));
