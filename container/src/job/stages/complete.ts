/**
 * Tells the Worker the job is done: the clips, the transcript's summary, the
 * translation and judgement, and where the job's time went (the stages up to
 * this report's own sending; the completion log line adds this one).
 */
import type { ClipReport } from "#contract";
import { keptSeconds } from "../../steer/removals.ts";
import { need, type JobContext, type RenderedClip } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

function clipReport(clip: RenderedClip): ClipReport {
  const reasons = clip.candidate.reasons
    .map((r) => r.trim().slice(0, 120))
    .filter((r) => r !== "")
    .slice(0, 8);
  return {
    index: clip.index,
    start_seconds: Math.max(0, clip.candidate.start),
    end_seconds: clip.candidate.end,
    score: Math.min(1, Math.max(0, clip.candidate.score)),
    reasons: reasons.length > 0 ? reasons : ["general"],
    width: clip.width,
    height: clip.height,
    reframe: clip.plan.used,
    faces_count: clip.plan.facesCount,
    text: clip.captions.text,
    // The model's post title when it wrote one (in the captions' language), else one of the clip's own lines.
    title: clip.candidate.judged?.title ?? clip.captions.title,
    captions_burned: clip.captions.captionsBurned,
    sidecars: clip.captions.vttPath !== null && clip.captions.srtPath !== null,
    prompt_match: clip.promptMatch,
    removed: clip.removal.removed,
    zooms: clip.zooms,
    ...(clip.removal.kept.length > 1 ? { duration_seconds: Math.round(keptSeconds(clip.removal) * 1000) / 1000 } : {}),
    framing: clip.framing,
    scores: clip.candidate.judged?.scores ?? null,
    judged_by: clip.candidate.judged ? "model" : "signals",
    description: clip.candidate.judged?.description ?? null,
    hashtags: clip.candidate.judged?.hashtags ?? [],
  };
}

export const complete: JobStage<JobContext> = {
  name: "complete",
  timing: () => "complete",
  async run(ctx) {
    const { job, transcript, clock } = ctx;
    const source = need(ctx.source, "the probed source");
    const judged = need(ctx.judged, "the judgement");
    await ctx.reporter.complete({
      title: source.title,
      source_duration_seconds: source.durationSeconds,
      clips: need(ctx.rendered, "the rendered clips").map(clipReport),
      transcript: transcript ? { source: transcript.source, language: transcript.language, word_count: transcript.words.length } : null,
      transcript_unavailable_reason: transcript ? null : (ctx.transcriptReason ?? "No transcript.").slice(0, 300),
      translation: need(ctx.brand, "the brand").translationOutcome,
      judgement: judged.judgement,
      chapters: judged.chapters,
      timings: { ...(job.timeline ? { timeline: job.timeline } : {}), engine_started_at: clock.startedAt, stages: clock.timings().slice(0, 64) },
    });
  },
};
