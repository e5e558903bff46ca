/**
 * The pool of candidate clips: with a prompt, the moments that match it
 * ranked with the analysis's signal (steer/prompt.ts); without one, several
 * times the clips asked, for judgement to choose among (judge/candidates.ts).
 * Snapped edges never leave the time_range.
 */
import { JUDGE_CANDIDATES_PER_CLIP, JUDGE_MAX_CANDIDATES } from "#contract";
import { NoClipsFoundError } from "../../analyse/index.ts";
import { SENTENCE_SNAPPED_TYPES } from "../../analyse/sentence-cuts.ts";
import { proposeCandidates } from "../../judge/candidates.ts";
import { JobFailure } from "../../shared/errors.ts";
import { log } from "../../shared/log.ts";
import type { Candidate } from "../../shared/types.ts";
import { promptClips } from "../../steer/prompt.ts";
import { need, type JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

function promptOf(ctx: JobContext): string | null {
  return ctx.job.config.prompt ?? null;
}

export const candidates: JobStage<JobContext> = {
  name: "candidates",
  timing: (ctx) => (promptOf(ctx) ? "prompt" : null),
  async run(ctx) {
    const { job, transcript } = ctx;
    const { window, analysed, windows, quiet } = need(ctx.analysis, "the analysis");
    const prompt = promptOf(ctx);
    const limits = { min: job.config.min_clip_seconds, max: job.config.max_clip_seconds, duration: window.end };
    let pool: Candidate[];
    if (prompt) {
      if (!transcript) {
        throw new JobFailure("prompt_needs_transcript", `The job has a prompt, but there is no transcript to match it against. ${ctx.transcriptReason ?? ""}`.trim());
      }
      const matched = await promptClips(
        {
          prompt,
          transcript,
          limits: { min: limits.min, max: limits.max, from: window.start, to: window.end },
          maxClips: Math.min(JUDGE_MAX_CANDIDATES, job.config.max_clips * JUDGE_CANDIDATES_PER_CLIP),
          windows,
          reporter: ctx.reporter,
          jobId: ctx.jobId,
        },
        (method) => ctx.progress.enter("transcribe", method === "meaning" ? "Matching the prompt by meaning" : "Matching the prompt by words (no text embeddings on this deployment)"),
      );
      log.info("job_prompt", { job_id: ctx.jobId, method: matched.method, clips: matched.candidates.length });
      pool = matched.candidates;
      ctx.promptMatches = matched.matches;
    } else {
      pool = proposeCandidates({ analysed, windows, transcript, snapped: SENTENCE_SNAPPED_TYPES.has(job.video_type), limits, quiet, clipsWanted: job.config.max_clips });
    }
    ctx.candidates = pool
      .map((c) => ({ ...c, start: Math.max(c.start, window.start), end: Math.min(c.end, window.end) }))
      .filter((c) => c.end - c.start > 0);
    if (ctx.candidates.length === 0) throw new NoClipsFoundError("analysis returned no candidates");
  },
};
