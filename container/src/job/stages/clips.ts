/**
 * Renders the clips and uploads each while the next ones render
 * (clip-pipeline.ts): the transcript goes first in the upload lane, then
 * clip 0, 1, 2... as each is rendered. The steps are the stage's own ("Rendering
 * clips 2 and 3 of 5", then "Uploading clips"), so the runner enters none.
 */
import type { SourceWindow } from "../../steer/time-range.ts";
import type { Interval } from "../../steer/removals.ts";
import { runClipPipeline } from "../clip-pipeline.ts";
import { renderJobClip, type ClipRenderPlan } from "../clip-render.ts";
import { storeTranscript, uploadJobClip } from "../clip-upload.ts";
import { ClipsProgress } from "../clips-progress.ts";
import { need, type JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

/** The step while clips render: "Rendering clip 2 of 5", or with several at once "Rendering clips 2 and 3 of 5". */
export function renderingStep(running: number[], count: number): string {
  const numbers = running.map((i) => i + 1);
  if (numbers.length <= 1) return `Rendering clip ${numbers[0] ?? 1} of ${count}`;
  return `Rendering clips ${numbers.slice(0, -1).join(", ")} and ${numbers.at(-1)} of ${count}`;
}

/** Pauses of the analysed window: the gaps between the spans where the analysis heard sound. */
function pausesBetween(sound: Interval[] | null, window: SourceWindow): Interval[] {
  if (!sound) return [];
  const pauses: Interval[] = [];
  let at = window.start;
  for (const span of [...sound].sort((a, b) => a.start - b.start)) {
    if (span.start > at) pauses.push({ start: at, end: span.start });
    at = Math.max(at, span.end);
  }
  if (window.end > at) pauses.push({ start: at, end: window.end });
  return pauses;
}

export const clips: JobStage<JobContext> = {
  name: "clips",
  async run(ctx) {
    const { workDir, reporter, jobId, clock } = ctx;
    const analysis = need(ctx.analysis, "the analysis");
    const candidates = need(ctx.candidates, "the clips");
    const brand = need(ctx.brand, "the brand");
    const count = candidates.length;
    const progress = new ClipsProgress(ctx.progress, count);
    const plan: ClipRenderPlan = {
      source: need(ctx.source, "the probed source"),
      candidates,
      transcript: ctx.transcript,
      pauses: pausesBetween(analysis.speechSpans, analysis.window),
      speechSpans: analysis.speechSpans,
      emphasis: analysis.emphasis,
      keyframes: analysis.keyframes,
      brand,
      promptMatches: ctx.promptMatches,
      progress,
    };
    ctx.rendered = await runClipPipeline({
      count,
      concurrency: Math.min(ctx.config.renderConcurrency, count),
      signal: ctx.signal,
      render: (index, signal) => clock.time(`render ${index}`, () => renderJobClip(ctx, plan, index, signal)),
      upload: (index, clip, signal) => clock.time(`upload ${index}`, () => uploadJobClip(ctx, progress, clip, signal)),
      // The transcript is small and ready now: stored first, while the first clips render.
      uploadFirst: async (signal) => {
        if (!ctx.transcript) return;
        const stored = ctx.transcript;
        const unstored = await clock.time("upload transcript", () => storeTranscript(stored, workDir, reporter, jobId, signal));
        if (unstored) {
          ctx.transcript = null;
          ctx.transcriptReason = unstored;
        }
      },
      onRendering: (running) => ctx.progress.enter("render", `${renderingStep(running, count)}${brand.note}${ctx.backendNote}`),
      onRendersDone: () => {
        // The notes still hold for what is being handed over (the captions' language, the brand, a slow backend).
        ctx.progress.enter("upload", `Uploading clips${brand.note}${ctx.backendNote}`);
        progress.rendersDone();
      },
    });
    // Nothing follows the final callback: the progress reports stop before the next stage sends it.
    await ctx.progress.stop();
  },
};
