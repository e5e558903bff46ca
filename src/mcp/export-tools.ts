/** The MCP tool that exports a completed job's cut for an editor; the service of GET /api/v1/jobs/{job_id}/export. */
import { z } from "zod";
import { EXPORT_FORMATS } from "../jobs/export/index.ts";
import { exportOwnJob } from "../jobs/export/read.ts";
import { defineTool } from "./tool.ts";
import { toolResult } from "./tool-result.ts";

export const exportJobTool = defineTool({
  name: "export_job",
  title: "Export a job's clips for a video editor",
  description:
    "A completed job's clips as an editor timeline against the source video: fcpxml (Final Cut Pro, DaVinci Resolve), edl (CMX 3600: Premiere, Resolve), " +
    "otio (OpenTimelineIO JSON) or mlt (Shotcut, Kdenlive). It carries each clip's in and out in the source, its crop (keyframed where the camera moves; " +
    "not in edl) and its caption files' URLs. The answer's text is the file itself, to save as file_name. job_not_completed: the job has no clips yet (or failed/was canceled).",
  input: z.strictObject({
    job_id: z.string().min(1).max(200).describe("The job's id (job_...), as submit_job or list_jobs returned it"),
    format: z.enum(EXPORT_FORMATS).describe("fcpxml, edl, otio or mlt"),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ job_id: jobId, format }, { env, auth, origin }) {
    const cut = await exportOwnJob(env, auth.accountId, jobId, format, origin);
    return toolResult({ job_id: jobId, format, file_name: cut.fileName, content_type: cut.contentType, content: cut.body }, cut.body);
  },
});
