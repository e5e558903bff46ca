/**
 * Probes the downloaded source and tells the Worker what it is: the Worker
 * reserves the job's credits then, or refuses it (the job ends without
 * another callback).
 */
import { JobFailure } from "../../shared/errors.ts";
import { log } from "../../shared/log.ts";
import { probeSource } from "../../source/probe.ts";
import { uprightSize } from "../../render/geometry.ts";
import { need, type JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

export const probe: JobStage<JobContext> = {
  name: "probe",
  progress: (ctx) => ({ stage: "probe", step: `Probing video${ctx.backendNote}` }),
  timing: () => "probe",
  async run(ctx) {
    const { job, jobId } = ctx;
    const fetched = need(ctx.fetched, "the downloaded source");
    const source = await probeSource({
      runner: ctx.runner,
      path: fetched.path,
      sizeBytes: fetched.bytes,
      videoUrl: job.video_url,
      platformTitle: fetched.title,
      maxSourceSeconds: job.limits.max_source_seconds,
      signal: ctx.signal,
    });
    ctx.source = source;
    if (ctx.captionsUrlCues && !ctx.captionsUrlCues.some((cue) => cue.start < source.durationSeconds)) {
      throw new JobFailure("captions_invalid", "captions_url: none of the file's cues fall within the video's length.");
    }
    const ack = await ctx.reporter.probe({
      duration_seconds: source.durationSeconds,
      title: source.title,
      // The picture as shown: a phone's portrait video stored turned is reported portrait.
      ...uprightSize(source),
      format: source.format.slice(0, 100),
      size_bytes: source.sizeBytes,
    });
    if (!ack.proceed) {
      log.info("job_refused_by_worker", { job_id: jobId, code: ack.error?.code });
      return "refused";
    }
  },
};
