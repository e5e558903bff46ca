/**
 * Fetches the source into the work directory. The analysis reads a direct
 * link or an upload as it arrives (native ffmpeg only; yt-dlp merges at the
 * end), so it starts here (analyse/early.ts); a time_range job measures only
 * its range, from the finished file (the passes seek to it).
 */
import { callbackUrl } from "#contract";
import { startEarlyAnalysis } from "../../analyse/early.ts";
import { CallbackError, type JobReporter } from "../../channel/report.ts";
import { log } from "../../shared/log.ts";
import { GrowingFile } from "../../source/growing-file.ts";
import { fetchSource } from "../../source/index.ts";
import { classifySourceUrl } from "../../source/platforms.ts";
import type { JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

/** The largest cookies file the Worker stores (src/cookies/netscape.ts), with room for its header line. */
const MAX_COOKIES_BYTES = 101 * 1024;

export function isPlatformUrl(videoUrl: string): boolean {
  try {
    return classifySourceUrl(new URL(videoUrl)).kind === "platform";
  } catch {
    return false;
  }
}

/**
 * The account's cookies file for the platform, or null. A channel that cannot
 * answer costs the download its cookies, not the job; a job the Worker ended
 * (409) stops as everywhere else. The file's text is never logged.
 */
async function readPlatformCookies(reporter: JobReporter, jobId: string): Promise<string | null> {
  try {
    return await reporter.getCookies(MAX_COOKIES_BYTES);
  } catch (error) {
    if (error instanceof CallbackError && error.status !== 409) {
      console.warn(`[${jobId}] could not read the account's platform cookies (HTTP ${error.status}); downloading without them`);
      return null;
    }
    throw error;
  }
}

export const download: JobStage<JobContext> = {
  name: "download",
  progress: () => ({ stage: "download", step: "Downloading video" }),
  timing: () => "download",
  async run(ctx) {
    const { job, runner, config, deps, workDir, signal, jobId } = ctx;
    const arriving = new GrowingFile(workDir.file("source.video"));
    if (runner.backend === "native" && !isPlatformUrl(job.video_url) && !job.time_range) {
      ctx.early = startEarlyAnalysis({
        runner,
        source: arriving,
        videoType: job.video_type,
        speech: ctx.speechLoad,
        workDir: workDir.path,
        timeoutMs: (job.limits.download_timeout_seconds + 120 + job.limits.max_source_seconds * 2) * 1000,
        signal,
      });
    }
    ctx.fetched = await fetchSource({
      videoUrl: job.video_url,
      limits: job.limits,
      allowPrivateHosts: config.allowPrivateHosts,
      backendMaxBytes: runner.maxSourceBytes,
      backendName: runner.backend === "wasm" ? "WebAssembly" : "native",
      workDir: workDir.path,
      destPath: workDir.file("source.video"),
      ytdlpPath: config.ytdlpPath,
      stallTimeoutMs: config.downloadStallTimeoutMs,
      maxRedirects: config.maxRedirects,
      signal,
      onProgress: (f) => ctx.progress.update(f),
      onWritten: () => arriving.grew(),
      policy: deps.policy,
      resolver: deps.resolver,
      upload: job.source === "upload" ? { url: callbackUrl(config.callbackBase, jobId, "source"), token: job.token } : undefined,
      platformCookies: () => readPlatformCookies(ctx.reporter, jobId),
      platformProxy: config.platformProxy,
    }).catch((error: unknown) => {
      arriving.fail(error);
      throw error;
    });
    arriving.finish();
    log.info("job_downloaded", { job_id: jobId, bytes: ctx.fetched.bytes });
  },
};
