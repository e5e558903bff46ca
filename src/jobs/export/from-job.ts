/** The export model of a completed job, from its stored row and clips. */
import type { Clip } from "../../db/clips.ts";
import type { Job } from "../../db/jobs.ts";
import { captionKeysOf } from "../present.ts";
import { cdnUrl } from "../storage.ts";
import { centredFraming, cropKeys, frameRate, keptSpans, toFrames, type ExportClip, type ExportTimeline } from "./timeline.ts";

/**
 * The file name an editor looks for: an upload's own name, a direct file's
 * last path segment; for a platform page (no file name in its URL, e.g.
 * /watch?v=...) the video's title, which is what a download of it is named.
 */
export function sourceFileName(videoUrl: string, title: string | null): string {
  try {
    const url = new URL(videoUrl);
    const last = url.pathname.split("/").filter((part) => part !== "").at(-1);
    const name = last === undefined ? null : decodeURIComponent(last);
    if (url.protocol === "upload:") return name ?? title ?? "upload";
    if (name !== null && /\.[A-Za-z0-9]{2,5}$/.test(name)) return name;
    return title ?? name ?? url.hostname;
  } catch {
    return title ?? "source";
  }
}

export interface ExportContext {
  cdnBase: string;
  /** The API's origin, for the transcript's address. */
  apiOrigin: string;
}

export function exportTimeline(job: Job, clips: Clip[], context: ExportContext): ExportTimeline {
  // Every clip of a job is cut from the one source: the first clip that reports framing tells its picture.
  const reported = clips.find((clip) => clip.framing !== null)?.framing ?? null;
  const first = clips[0];
  const source = reported
    ? { width: reported.source_width, height: reported.source_height, fps: reported.source_fps }
    : // Clips of an engine that did not report framing: the source is known only as the picture it gave.
      { width: first?.width ?? 1920, height: first?.height ?? 1080, fps: 30 };
  const rate = frameRate(source.fps);
  const fileName = sourceFileName(job.videoUrl, job.title);
  const exported: ExportClip[] = clips.map((clip) => {
    const framing = clip.framing ?? centredFraming(source, { width: clip.width, height: clip.height }, clip.endSeconds - clip.startSeconds);
    const keys = captionKeysOf(clip);
    return {
      index: clip.index,
      name: clip.title ?? `Clip ${clip.index + 1}`,
      url: cdnUrl(context.cdnBase, clip.objectKey),
      window: { width: framing.crop_width, height: framing.crop_height },
      output: { width: clip.width, height: clip.height },
      spans: keptSpans(clip.startSeconds, clip.endSeconds, clip.removed).map((span) => ({
        sourceIn: toFrames(span.start, rate),
        sourceOut: toFrames(span.end, rate),
        crop: cropKeys(framing, clip.startSeconds, span, rate),
      })),
      captions: keys ? { vtt: cdnUrl(context.cdnBase, keys.vtt), srt: cdnUrl(context.cdnBase, keys.srt) } : null,
      split: framing.split,
    };
  });
  return {
    jobId: job.id,
    title: job.title ?? fileName,
    source: {
      url: job.uploadId === null ? job.videoUrl : null,
      fileName,
      width: source.width,
      height: source.height,
      durationFrames: job.sourceDurationSeconds === null ? null : toFrames(job.sourceDurationSeconds, rate),
    },
    rate,
    clips: exported,
    transcriptUrl: job.transcript ? `${context.apiOrigin.replace(/\/+$/, "")}/api/v1/jobs/${job.id}/transcript` : null,
  };
}
