/**
 * Brand and language, once for all clips: the captions translated into the
 * job's caption language and the account's logo (brand/prepare.ts).
 */
import { prepareBrand } from "../../brand/prepare.ts";
import { outputSize } from "../../render/geometry.ts";
import { need, type JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

export const brand: JobStage<JobContext> = {
  name: "brand",
  timing: () => "brand",
  async run(ctx) {
    ctx.brand = await prepareBrand({
      job: ctx.job,
      runner: ctx.runner,
      reporter: ctx.reporter,
      progress: ctx.progress,
      transcript: ctx.transcript,
      clips: need(ctx.candidates, "the clips"),
      output: outputSize(ctx.job.config, need(ctx.source, "the probed source")),
      logoPath: ctx.workDir.file("logo.image"),
      signal: ctx.signal,
    });
  },
};
