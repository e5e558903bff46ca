/**
 * Hands a rendered clip's objects to the Worker (the video, its thumbnail,
 * its caption sidecars), and the job's transcript before the clips.
 */
import { rm, stat, writeFile } from "node:fs/promises";
import { MAX_TRANSCRIPT_UPLOAD_BYTES, type Transcript } from "#contract";
import { CallbackError, type JobReporter } from "../channel/report.ts";
import { log } from "../shared/log.ts";
import type { WorkDir } from "../shared/workdir.ts";
import type { ClipsProgress } from "./clips-progress.ts";
import type { JobContext, RenderedClip } from "./context.ts";

/** Promise.all that lets every promise settle before it rejects with the first failure (in order). */
async function allSettledOrThrow<T extends readonly unknown[]>(promises: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * Sidecars and the transcript are extras: a Worker that does not know their
 * route (404, e.g. mid-rollout of a new engine) leaves the clip without them
 * instead of failing the job. Anything else (409, retries exhausted) still
 * ends the job as before.
 */
async function optionalUpload(jobId: string, upload: () => Promise<void>): Promise<boolean> {
  try {
    await upload();
    return true;
  } catch (error) {
    if (error instanceof CallbackError && error.status === 404) {
      log.warn("job_optional_upload_refused", { job_id: jobId, error: error.message });
      return false;
    }
    throw error;
  }
}

/** Stores the transcript; answers why not when it could not be stored, null when it was. */
export async function storeTranscript(transcript: Transcript, workDir: WorkDir, reporter: JobReporter, jobId: string, signal: AbortSignal): Promise<string | null> {
  const body = JSON.stringify(transcript);
  if (Buffer.byteLength(body) > MAX_TRANSCRIPT_UPLOAD_BYTES) {
    log.warn("job_transcript_too_large", { job_id: jobId, bytes: Buffer.byteLength(body) });
    return "The transcript is larger than the 8 MiB the service stores.";
  }
  const transcriptPath = workDir.file("transcript.json");
  await writeFile(transcriptPath, body, "utf8");
  const stored = await optionalUpload(jobId, () => reporter.putFile("transcript", transcriptPath, "application/json", undefined, signal));
  return stored ? null : "The transcript could not be stored by this deployment.";
}

export async function uploadJobClip(ctx: JobContext, progress: ClipsProgress, clip: RenderedClip, signal: AbortSignal): Promise<void> {
  const { reporter, jobId } = ctx;
  const { index } = clip;
  const onBytes = (n: number) => progress.uploaded(index, n);
  // The clip's objects go up side by side: after the last render only this clip's upload stands
  // between the renders and completion, and the small ones need not wait for the clip's bytes.
  // The thumbnail is made here, beside the clip's own upload, not after the render: after the last
  // render it no longer stands between the clip's bytes and completion (the floor's encodes take theirs
  // after each encode, as the render lane did). All settled before a failure is thrown: the pipeline
  // counts on no request and no ffmpeg of this clip outliving its upload.
  const { vttPath, srtPath } = clip.captions;
  const thumbnail = async () => {
    await clip.makeThumbnail(signal);
    progress.toUpload(index, (await stat(clip.thumbnailPath)).size);
    await reporter.putFile(`clips/${index}/thumbnail`, clip.thumbnailPath, "image/jpeg", onBytes, signal);
  };
  const [, , stored] = await allSettledOrThrow<[void, void, boolean | null]>([
    reporter.putFile(`clips/${index}`, clip.videoPath, "video/mp4", onBytes, signal),
    thumbnail(),
    vttPath && srtPath
      ? allSettledOrThrow<[boolean, boolean]>([
          optionalUpload(jobId, () => reporter.putFile(`clips/${index}/captions.vtt`, vttPath, "text/vtt; charset=utf-8", undefined, signal)),
          optionalUpload(jobId, () => reporter.putFile(`clips/${index}/captions.srt`, srtPath, "application/x-subrip; charset=utf-8", undefined, signal)),
        ]).then(([vtt, srt]) => vtt && srt)
      : Promise.resolve(null),
  ]);
  if (stored === false) clip.captions = { ...clip.captions, vttPath: null, srtPath: null };
  // Stored: the work disk need not hold every clip until the end of a long job.
  await Promise.all([rm(clip.videoPath, { force: true }), rm(clip.thumbnailPath, { force: true })]);
}
