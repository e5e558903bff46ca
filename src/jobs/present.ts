/** Job -> API JSON, shaped by status (SPEC section 3). Clip links live under CDN_URL. */
import type { Clip } from "../db/clips.ts";
import type { AiUsageTotals, Job } from "../db/jobs.ts";
import { USD_PER_NEURON } from "../ai/pricing.ts";
import { cdnUrl, legacyCaptionsKey } from "./storage.ts";

/** A clip's published sidecar keys, or null without sidecars (clips published under the older layout keep theirs next to the clip). */
export function captionKeysOf(clip: Clip): { vtt: string; srt: string } | null {
  if (!clip.sidecars) return null;
  return {
    vtt: clip.vttKey ?? legacyCaptionsKey(clip.jobId, clip.index, "vtt"),
    srt: clip.srtKey ?? legacyCaptionsKey(clip.jobId, clip.index, "srt"),
  };
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function captionsOf(cdnBase: string, clip: Clip): { vtt_url: string; srt_url: string } | null {
  const keys = captionKeysOf(clip);
  return keys ? { vtt_url: cdnUrl(cdnBase, keys.vtt), srt_url: cdnUrl(cdnBase, keys.srt) } : null;
}

export function presentClip(cdnBase: string, clip: Clip) {
  return {
    url: cdnUrl(cdnBase, clip.objectKey),
    thumbnail_url: cdnUrl(cdnBase, clip.thumbnailKey),
    start_seconds: round3(clip.startSeconds),
    end_seconds: round3(clip.endSeconds),
    // Removed pauses and fillers make a clip shorter than its span.
    duration_seconds: round3(clip.durationSeconds ?? clip.endSeconds - clip.startSeconds),
    score: clip.score,
    reasons: clip.reasons,
    width: clip.width,
    height: clip.height,
    reframe: clip.reframe,
    faces_count: clip.facesCount,
    text: clip.text,
    title: clip.title,
    captions: captionsOf(cdnBase, clip),
    captions_burned: clip.captionsBurned,
    prompt_match: clip.promptMatch,
    removed: clip.removed.map((span) => ({
      start_seconds: round3(span.start_seconds),
      end_seconds: round3(span.end_seconds),
      kind: span.kind,
    })),
    zooms: clip.zooms.map((span) => ({ start_seconds: round3(span.start_seconds), end_seconds: round3(span.end_seconds) })),
    // Judgement (docs/judgement.md): the model's sub-scores and post, or signals alone.
    scores: clip.scores,
    judged_by: clip.judgedBy,
    description: clip.description,
    hashtags: clip.hashtags,
    version: clip.version,
  };
}

/** Which transcript the clips were cut and captioned from, or why there was none. */
function speechFields(job: Job) {
  return {
    transcript: job.transcript ? { source: job.transcript.source, language: job.transcript.language, word_count: job.transcript.word_count } : null,
    transcript_unavailable_reason: job.transcript ? null : job.transcriptUnavailableReason,
    language: job.transcript?.language ?? null,
    // What became of caption_language (null when none was asked for).
    translation: job.translation ?? null,
    judgement: job.judgement,
    chapters: job.chapters.map((chapter) => ({ title: chapter.title, start_seconds: round3(chapter.start_seconds) })),
  };
}

function presentAiUsage(usage: AiUsageTotals) {
  return {
    model_calls: usage.calls,
    tokens_in: usage.tokensIn,
    tokens_out: usage.tokensOut,
    audio_seconds: round3(usage.audioSeconds),
    neurons: round3(usage.neurons),
    estimated_usd: Math.round(usage.neurons * USD_PER_NEURON * 1e6) / 1e6,
  };
}

/** Fields every job has, whatever its status. */
function commonFields(job: Job) {
  return {
    job_id: job.id,
    // An upload job has no public URL: it names its upload instead.
    ...(job.uploadId !== null ? { video_url: null, upload_id: job.uploadId } : { video_url: job.videoUrl }),
    video_type: job.videoType,
    config_name: job.configName,
    captions_url: job.captionsUrl,
    // Steering; a job stored before it has the defaults in its config.
    prompt: job.config.prompt ?? null,
    time_range: job.timeRange ?? null,
    remove_silence: job.config.remove_silence ?? "off",
    remove_fillers: job.config.remove_fillers ?? false,
    // The language settings (a job stored in a live state before these existed has neither).
    language_hint: job.config.language ?? null,
    caption_language: job.config.caption_language ?? null,
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    ...(job.sourceDurationSeconds !== null ? { source_duration_seconds: job.sourceDurationSeconds } : {}),
    ...(job.aiUsage ? { ai_usage: presentAiUsage(job.aiUsage) } : {}),
  };
}

/** The job as GET /jobs/:id answers it; `status` is set per branch so each shape carries its own literal. */
export function presentJob(cdnBase: string, job: Job, clips: Clip[]) {
  const common = commonFields(job);
  // A finished job always has completed_at; updated_at stands in should a row ever lack it.
  const completedAt = job.completedAt ?? job.updatedAt;
  switch (job.status) {
    case "queued":
    case "processing":
      return {
        ...common,
        status: job.status,
        progress: job.progress,
        step: job.step,
        ...(job.title !== null ? { title: job.title } : {}),
      };
    case "completed":
      return {
        ...common,
        status: job.status,
        title: job.title ?? "",
        clips_count: clips.length,
        clip_urls: clips.map((clip) => cdnUrl(cdnBase, clip.objectKey)),
        clips: clips.map((clip) => presentClip(cdnBase, clip)),
        ...speechFields(job),
        completed_at: completedAt,
        credits_charged: job.creditsCharged,
      };
    case "failed":
      return {
        ...common,
        status: job.status,
        ...(job.title !== null ? { title: job.title } : {}),
        error: { code: job.errorCode ?? "internal_error", message: job.errorMessage ?? "The job failed." },
        completed_at: completedAt,
        credits_charged: 0 as const,
      };
    case "canceled":
      return {
        ...common,
        status: job.status,
        ...(job.title !== null ? { title: job.title } : {}),
        completed_at: completedAt,
        credits_charged: 0 as const,
      };
  }
}

function withoutClipDetail<T extends { clips: unknown }>({ clips: _detail, ...rest }: T): Omit<T, "clips"> {
  return rest;
}

/**
 * A list item: the status shape plus `title`, `clips_count` and `clip_urls`
 * for every status (null/0/[] until the job completes), without per-clip detail.
 */
export function presentListItem(cdnBase: string, job: Job, clips: Clip[]) {
  const full = presentJob(cdnBase, job, clips);
  const shaped = full.status === "completed" ? withoutClipDetail(full) : full;
  return {
    ...shaped,
    title: job.title,
    clips_count: clips.length,
    clip_urls: clips.map((clip) => cdnUrl(cdnBase, clip.objectKey)),
  };
}
