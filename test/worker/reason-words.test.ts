import { describe, expect, it } from "vitest";
import type { Clip } from "../../src/db/clips.ts";
import type { Job } from "../../src/db/jobs.ts";
import { JobCard } from "../../src/dashboard/components/job-card.tsx";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { reasonInWords, reasonsInWords } from "../../src/jobs/reason-words.ts";

describe("clip reasons in words", () => {
  it("reads each engine signal as a phrase, and an unknown one still reads", () => {
    expect(reasonInWords("loudness_peak")).toBe("a loud moment");
    expect(reasonInWords("speech_density")).toBe("steady speech");
    expect(reasonInWords("some_new_signal")).toBe("some new signal");
    expect(reasonsInWords(["loudness_peak"])).toBe("a loud moment");
    expect(reasonsInWords(["loudness_peak", "motion_burst", "scene_change"])).toBe("a loud moment, a burst of motion and scene changes");
    expect(reasonsInWords([])).toBe("");
  });

  it("is what the dashboard's job card shows under each clip", async () => {
    const now = "2026-11-22T10:00:00.000Z";
    const job: Job = {
      id: "job_words", accountId: "acc", status: "completed", progress: 100, step: "Done", videoUrl: "https://example.com/v.mp4",
      videoType: "gaming", configName: null, config: DEFAULT_CLIP_CONFIG, title: "Finals", sourceDurationSeconds: 90,
      creditsReserved: 0, creditsCharged: 2, errorCode: null, errorMessage: null, lastReportAt: now, restarts: 0, uploadId: null, captionsUrl: null, timeRange: null, transcript: null, transcriptUnavailableReason: null, translation: null, judgement: null, chapters: [], createdAt: now, updatedAt: now, completedAt: now,
    };
    const clip: Clip = {
      jobId: job.id, index: 0, objectKey: "clips/job_words/0.mp4", thumbnailKey: "clips/job_words/0.jpg",
      startSeconds: 10, endSeconds: 40, score: 0.8, reasons: ["loudness_peak", "motion_burst"], width: 1080, height: 1920, reframe: "center", facesCount: 0, text: null, title: null, captionsBurned: false, sidecars: false, vttKey: null, srtKey: null,
      promptMatch: null, removed: [], zooms: [], durationSeconds: null, framing: null, scores: null, judgedBy: "signals", description: null, hashtags: [], version: 1, overrides: {}, corrections: [],
    };
    const html = (await JobCard({ job, clips: [clip], cdnBase: "https://cdn.example.com" }).toString()).replace(/\s+/g, " ");
    const shown = />\s*Chosen for ([^<]*)</.exec(html)?.[1]?.trim();
    expect(shown).toBe("a loud moment and a burst of motion");
  });
});
