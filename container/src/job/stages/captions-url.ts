/**
 * Downloads the captions file the client named (captions_url): an unusable
 * one fails the job (captions_invalid) before any work is charged.
 */
import { policyFor, systemResolver } from "../../source/address-policy.ts";
import { fetchCaptionsUrl } from "../../transcript/captions-url.ts";
import type { JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

/** A captions file is small: it gets at most this long to download, whatever the video's limit. */
const CAPTIONS_DOWNLOAD_MS = 60_000;

export const captionsUrl: JobStage<JobContext> = {
  name: "captions-url",
  async run(ctx) {
    const { job, config, deps } = ctx;
    if (!job.captions_url) return;
    ctx.captionsUrlCues = await fetchCaptionsUrl({
      url: job.captions_url,
      destPath: ctx.workDir.file("captions-url.txt"),
      timeoutMs: Math.min(CAPTIONS_DOWNLOAD_MS, job.limits.download_timeout_seconds * 1000),
      stallTimeoutMs: config.downloadStallTimeoutMs,
      maxRedirects: config.maxRedirects,
      policy: deps.policy ?? policyFor(config.allowPrivateHosts),
      resolver: deps.resolver ?? systemResolver,
      signal: ctx.signal,
    });
  },
};
