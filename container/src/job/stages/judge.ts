/**
 * A language model judges the candidates' words and the best become the
 * clips; the signals choose when none can (judge/stage.ts, docs/judgement.md).
 */
import { judgeStage } from "../../judge/stage.ts";
import { log } from "../../shared/log.ts";
import { need, type JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

export const judge: JobStage<JobContext> = {
  name: "judge",
  timing: () => "judge",
  async run(ctx) {
    const { job, transcript, transcriptReason } = ctx;
    const { window } = need(ctx.analysis, "the analysis");
    const judged = await judgeStage({
      job,
      reporter: ctx.reporter,
      pool: need(ctx.candidates, "the candidates"),
      transcript,
      limits: { min: job.config.min_clip_seconds, max: job.config.max_clip_seconds, from: window.start, to: window.end },
      sourceSeconds: need(ctx.source, "the probed source").durationSeconds,
      transcriptReason,
    });
    ctx.judged = judged;
    if (job.config.prompt) ctx.promptMatches = judged.order.map((i) => ctx.promptMatches[i] ?? 0);
    ctx.candidates = judged.candidates;
    log.info("job_transcript", { job_id: ctx.jobId, source: transcript?.source ?? null, words: transcript?.words.length ?? 0, reason: transcriptReason });
  },
};
