/** A job's transcript as its owner reads it (the REST route and the MCP tool). */
import type { Transcript } from "#contract";
import type { Job } from "../db/jobs.ts";
import { DomainError } from "../domain/errors.ts";
import { loadOwnJob } from "./account-jobs.ts";
import { loadTranscript, noTranscriptReason } from "./transcript-store.ts";

/** The account's job and its transcript; not_found for another account's job, transcript_not_found with the reason. */
export async function readOwnTranscript(env: Env, accountId: string, jobId: string): Promise<{ job: Job; transcript: Transcript }> {
  const job = await loadOwnJob(env.DB, accountId, jobId);
  const transcript = await loadTranscript(env, job);
  if (!transcript) throw new DomainError("transcript_not_found", noTranscriptReason(job));
  return { job, transcript };
}
