/**
 * Waits for the speech model (its load began with the job, beside the
 * download) when the source has audio to listen to.
 */
import { log } from "../../shared/log.ts";
import { need, type JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

export const speechModel: JobStage<JobContext> = {
  name: "speech-model",
  async run(ctx) {
    const speech = need(ctx.source, "the probed source").hasAudio ? await ctx.speechLoad : null;
    if (speech && "unavailable" in speech) log.warn("speech_detection_unavailable", { job_id: ctx.jobId, reason: speech.unavailable });
    ctx.speech = speech;
  },
};
