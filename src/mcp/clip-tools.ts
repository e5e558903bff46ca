/**
 * The MCP tools that edit a completed job's clip and cut a new one: the
 * services of PATCH /api/v1/jobs/{job_id}/clips/{index} and POST
 * /api/v1/jobs/{job_id}/clips, with the same bodies (job_id and index added).
 */
import { z } from "zod";
import { ClipAddBody, ClipEditBody } from "../jobs/clip-edit/contract.ts";
import { addClip, editClip } from "../jobs/clip-edit/service.ts";
import { defineTool } from "./tool.ts";
import { toolResult } from "./tool-result.ts";

const JobId = z.string().min(1).max(200).describe("The job's id (job_...), as submit_job or list_jobs returned it");
const Index = z.number().int().min(0).max(19).describe("The clip's index in the job (0: the best)");

/** A short line for the model: what was accepted and what to do next. */
function acceptedText(what: string, answer: { index: number; version: number; edit: { status: string } | null }): string {
  return `${what} clip ${answer.index} (published version ${answer.version}); its edit is ${answer.edit?.status ?? "done"}. Call get_job later: the clip's version goes up when the render is published.`;
}

export const editClipTool = defineTool({
  name: "edit_clip",
  title: "Edit a clip of a completed job",
  description:
    "Renders one clip of a completed job again as a new version: a new span (start_seconds/end_seconds anywhere in the source, to extend or trim), " +
    "caption word corrections ({index, text} by the word's index in the clip's words, or {start_seconds, text}), a title, or per-clip overrides " +
    "(reframe, layout, aspect_ratio, caption style, remove_silence, remove_fillers). Costs one credit per started minute of the new clip. " +
    "clip_edit_in_progress: the clip's previous edit is still rendering; invalid_clip_span / invalid_word: fix the input; source_expired: an upload job's source is gone.",
  input: ClipEditBody.safeExtend({ job_id: JobId, index: Index }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ job_id: jobId, index, ...body }, { env, auth }) {
    const answer = await editClip(env, auth, jobId, index, body);
    return toolResult(answer, acceptedText("Accepted an edit of", answer));
  },
});

export const addClipTool = defineTool({
  name: "add_clip",
  title: "Cut a new clip from a completed job's source",
  description:
    "Adds a clip to a completed job over a span of its source (start_seconds, end_seconds), rendered like the others; snap: true moves each edge to the nearest " +
    "sentence boundary within 2 s. The new clip takes the job's next index (at most 20 clips: clip_limit). Costs one credit per started minute of the clip.",
  input: ClipAddBody.safeExtend({ job_id: JobId }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ job_id: jobId, ...body }, { env, auth }) {
    const answer = await addClip(env, auth, jobId, body);
    return toolResult(answer, acceptedText("Accepted a new", answer));
  },
});
