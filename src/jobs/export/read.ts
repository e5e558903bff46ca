/** A job's cut as an editor project (the REST route and the MCP tool): the account's completed job, in one format. */
import { listClips } from "../../db/clips.ts";
import { DomainError } from "../../domain/errors.ts";
import { loadOwnJob } from "../account-jobs.ts";
import { exportTimeline } from "./from-job.ts";
import { EXPORT_WRITERS, type ExportFormat } from "./index.ts";

export interface ExportedCut {
  body: string;
  contentType: string;
  fileName: string;
}

/** not_found for another account's (or a deleted) job; job_not_completed for one without clips. */
export async function exportOwnJob(env: Env, accountId: string, jobId: string, format: ExportFormat, apiOrigin: string): Promise<ExportedCut> {
  const job = await loadOwnJob(env.DB, accountId, jobId);
  if (job.status !== "completed") {
    throw new DomainError("job_not_completed", `Job ${job.id} is ${job.status}; only a completed job's clips can be exported.`);
  }
  const clips = await listClips(env.DB, job.id);
  const writer = EXPORT_WRITERS[format];
  return {
    body: writer.write(exportTimeline(job, clips, { cdnBase: env.CDN_URL, apiOrigin })),
    contentType: writer.contentType,
    fileName: `${job.id}.${writer.extension}`,
  };
}
