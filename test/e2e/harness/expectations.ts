/** Assertions the e2e files share: problem responses, finished jobs, clip files on the CDN. */
import { expect } from "vitest";
import type { ApiResult, ClipView, JobView } from "../../../scripts/local-stack/api-client.ts";
import { download, type scratchDir } from "./cdn.ts";
import { ffprobe } from "./ffprobe.ts";

/** An RFC 9457 problem with the SPEC's stable code. */
export function expectProblem(result: ApiResult, status: number, code: string): Record<string, unknown> {
  expect(result.status).toBe(status);
  expect(result.headers.get("Content-Type") ?? "").toContain("application/problem+json");
  const body = result.body as Record<string, unknown>;
  expect(body).toMatchObject({ status, code });
  expect(typeof body.request_id).toBe("string");
  return body;
}

/** A failed job as SPEC section 3 shapes it, with no charge. */
export function expectFailedWithoutCharge(job: JobView, code: string): void {
  expect(job.status).toBe("failed");
  expect(job.error?.code).toBe(code);
  expect((job.error?.message ?? "").length).toBeGreaterThan(0);
  expect(job.credits_charged ?? 0).toBe(0);
  expect(job.clip_urls ?? []).toEqual([]);
}

export interface ClipBounds {
  width: number;
  height: number;
  minSeconds: number;
  maxSeconds: number;
  maxClips: number;
  sourceSeconds: number;
}

/** Cut points are frame-accurate; container durations round to the frame and the audio packet. */
const DURATION_SLACK = 0.35;

/**
 * Everything a completed job promises about its clips, checked on the files
 * themselves: downloaded from {cdn_url} and probed with ffprobe.
 */
export async function expectClipsOnCdn(job: JobView, cdnUrl: string, bounds: ClipBounds, scratch: ReturnType<typeof scratchDir>): Promise<ClipView[]> {
  expect(job.status).toBe("completed");
  const clips = job.clips ?? [];
  expect(clips.length).toBeGreaterThanOrEqual(1);
  expect(clips.length).toBeLessThanOrEqual(bounds.maxClips);
  expect(job.clips_count).toBe(clips.length);
  expect(job.clip_urls).toEqual(clips.map((c) => c.url));

  for (const [index, clip] of clips.entries()) {
    expect(clip.url.startsWith(`${cdnUrl}/`)).toBe(true);
    expect(clip.thumbnail_url.startsWith(`${cdnUrl}/`)).toBe(true);
    expect(clip.width).toBe(bounds.width);
    expect(clip.height).toBe(bounds.height);
    expect(clip.score).toBeGreaterThanOrEqual(0);
    expect(clip.score).toBeLessThanOrEqual(1);
    expect(clip.reasons.length).toBeGreaterThan(0);
    expect(clip.start_seconds).toBeGreaterThanOrEqual(0);
    expect(clip.end_seconds).toBeLessThanOrEqual(bounds.sourceSeconds + 0.05);
    expect(clip.duration_seconds).toBeCloseTo(clip.end_seconds - clip.start_seconds, 1);
    expect(clip.duration_seconds).toBeGreaterThanOrEqual(bounds.minSeconds - DURATION_SLACK);
    expect(clip.duration_seconds).toBeLessThanOrEqual(bounds.maxSeconds + DURATION_SLACK);
    // Best clip first.
    if (index > 0) expect(clip.score).toBeLessThanOrEqual(clips[index - 1]?.score ?? 1);

    const video = await download(clip.url);
    expect(video.status).toBe(200);
    expect(video.contentType).toBe("video/mp4");
    const probed = await ffprobe(await scratch.save(`${job.job_id}-${index}.mp4`, video.bytes));
    expect(probed.formatName).toContain("mp4");
    expect(probed.video).toEqual({ codec: "h264", width: bounds.width, height: bounds.height });
    expect(probed.audio?.codec).toBe("aac");
    expect(probed.durationSeconds).toBeGreaterThanOrEqual(bounds.minSeconds - DURATION_SLACK);
    expect(probed.durationSeconds).toBeLessThanOrEqual(bounds.maxSeconds + DURATION_SLACK);
    expect(Math.abs(probed.durationSeconds - clip.duration_seconds)).toBeLessThan(DURATION_SLACK);

    const thumbnail = await download(clip.thumbnail_url);
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.contentType).toBe("image/jpeg");
    expect([thumbnail.bytes[0], thumbnail.bytes[1]]).toEqual([0xff, 0xd8]);
    const probedThumbnail = await ffprobe(await scratch.save(`${job.job_id}-${index}.jpg`, thumbnail.bytes));
    expect(probedThumbnail.video?.codec).toBe("mjpeg");
  }

  // Clips never overlap.
  const spans = [...clips].sort((a, b) => a.start_seconds - b.start_seconds);
  for (let i = 1; i < spans.length; i++) {
    expect(spans[i]?.start_seconds ?? 0).toBeGreaterThanOrEqual((spans[i - 1]?.end_seconds ?? 0) - 0.01);
  }
  return clips;
}
