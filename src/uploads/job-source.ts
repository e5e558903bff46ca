/**
 * An upload as a job's source: a job takes (claims) a complete upload at
 * submission, gives it back if the job is not created after all, and deletes
 * it when the job ends. The job's video_url is an internal `upload://` URL
 * whose last segment is the file name, so the engine titles it like a link.
 */
import { DomainError } from "../domain/errors.ts";
import { isUploadId } from "./ids.ts";
import { sourceKeptUntil } from "./kept-source.ts";
import { notFound, uploadError } from "./service.ts";
import { uploadState } from "./stub.ts";
import { wellFormed } from "./tus-metadata.ts";

export interface ClaimedUpload {
  uploadId: string;
  /** What the job row stores as video_url (never shown to clients). */
  videoUrl: string;
  /** The job's title until the engine reports one: the uploaded file's name. */
  title: string;
}

const UNNAMED = "Uploaded video";

/** Never throws: a name stored before names were kept well-formed has its half pairs replaced. */
export function uploadVideoUrl(uploadId: string, fileName: string | null): string {
  return `upload://${uploadId}/${encodeURIComponent(wellFormed(fileName ?? UNNAMED))}`;
}

/** Takes a complete upload of `accountId` for `jobId`, or throws the documented error. */
export async function claimUploadForJob(env: Env, accountId: string, uploadId: string, jobId: string): Promise<ClaimedUpload> {
  if (!isUploadId(uploadId)) throw notFound(uploadId);
  const result = await uploadState(env, uploadId).claim(accountId, jobId);
  if (!result.ok) {
    const error = uploadError(uploadId, result);
    throw new DomainError(error.code, error.message, { extra: error.extra, errors: [{ path: "upload_id", message: error.message }] });
  }
  try {
    return { uploadId, videoUrl: uploadVideoUrl(uploadId, result.upload.fileName), title: wellFormed(result.upload.fileName ?? UNNAMED) };
  } catch (err) {
    // Whatever fails after the claim gives the upload back: it must never stay taken by a job that does not exist.
    await unclaimUpload(env, uploadId, jobId);
    throw err;
  }
}

/** The job was not created: the upload is free again. Best effort (its expiry still applies). */
export async function unclaimUpload(env: Env, uploadId: string, jobId: string): Promise<void> {
  try {
    await uploadState(env, uploadId).unclaim(jobId);
  } catch (err) {
    console.error(`giving upload ${uploadId} back from ${jobId} failed`, err);
  }
}

/**
 * The job ended: its uploaded source is deleted. Idempotent; throws when the
 * upload's Durable Object could not be reached (the job's settling redoes it,
 * and the upload's own alarm finds the job ended and deletes it anyway).
 */
export async function releaseJobUpload(env: Env, jobId: string, uploadId: string): Promise<void> {
  await uploadState(env, uploadId).release(jobId);
}

/**
 * The job ended: a completed job keeps its uploaded source for clip edits
 * for its plan's period (kept-source.ts; the upload's alarm deletes it
 * then), any other job's is deleted now. Idempotent.
 */
export async function settleJobUpload(env: Env, job: { id: string; status: string }, uploadId: string): Promise<void> {
  const keptUntil = job.status === "completed" ? await sourceKeptUntil(env.DB, job.id) : null;
  if (keptUntil === null) return releaseJobUpload(env, job.id, uploadId);
  await uploadState(env, uploadId).keep(job.id, keptUntil);
}
