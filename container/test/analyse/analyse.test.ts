import { describe, expect, it } from "vitest";
import { ClipConfig, VIDEO_TYPES, type VideoType } from "#contract";
import { NoClipsFoundError, analyse } from "../../src/analyse/index.ts";
import type { Candidate } from "../../src/shared/types.ts";
import type { MediaSpec } from "../../../test/media/generate.ts";
import { generatedSource } from "../helpers/engine-source.ts";
import { nativeRunner } from "../helpers/media.ts";
import { ffmpegChildren } from "../helpers/processes.ts";

const runner = nativeRunner();

/** A bit of everything: speech with pauses, three loud bursts, scene changes every 14-17 s. */
const MIXED: MediaSpec = {
  durationSeconds: 90,
  bursts: [17, 44, 71],
  sceneChanges: [14, 31, 47.5, 62, 76],
  seed: 11,
};

async function run(spec: MediaSpec, type: VideoType, config: Partial<ClipConfig> = {}, onProgress: (f: number) => void = () => {}) {
  const { source, facts } = await generatedSource(runner, spec);
  const parsed = ClipConfig.parse({ min_clip_seconds: 10, max_clip_seconds: 30, ...config });
  const candidates = await analyse(runner, source, type, parsed, { signal: new AbortController().signal, onProgress });
  return { candidates, facts, config: parsed };
}

function expectWellFormed(candidates: Candidate[], config: ClipConfig, duration: number): void {
  expect(candidates.length).toBeGreaterThanOrEqual(1);
  expect(candidates.length).toBeLessThanOrEqual(config.max_clips);
  for (const c of candidates) {
    expect(c.start).toBeGreaterThanOrEqual(0);
    expect(c.end).toBeLessThanOrEqual(duration + 1e-6);
    expect(c.end - c.start).toBeGreaterThanOrEqual(config.min_clip_seconds - 1e-6);
    expect(c.end - c.start).toBeLessThanOrEqual(config.max_clip_seconds + 1e-6);
    expect(c.score).toBeGreaterThanOrEqual(0);
    expect(c.score).toBeLessThanOrEqual(1);
    expect(c.reasons.length).toBeGreaterThanOrEqual(1);
    for (const reason of c.reasons) expect(reason).toMatch(/^[a-z]+(_[a-z]+)*$/);
  }
  for (let i = 1; i < candidates.length; i++) expect(candidates[i]!.score).toBeLessThanOrEqual(candidates[i - 1]!.score);
  const byStart = [...candidates].sort((a, b) => a.start - b.start);
  for (let i = 1; i < byStart.length; i++) expect(byStart[i]!.start).toBeGreaterThanOrEqual(byStart[i - 1]!.end);
}

describe("analyse", () => {
  it.each(VIDEO_TYPES)("%s: clips within the configured lengths, never overlapping, scored 0-1 with reasons", async (type) => {
    const { candidates, facts, config } = await run(MIXED, type);
    expectWellFormed(candidates, config, facts.durationSeconds);
  });

  it("podcast: every clip starts and ends inside a planted pause", async () => {
    const { candidates, facts, config } = await run({ durationSeconds: 90, seed: 5 }, "podcast", { max_clips: 5 });
    expectWellFormed(candidates, config, facts.durationSeconds);
    // The AAC encoder delays the audio by about 21 ms; allow that much past a pause's planted end.
    const inPause = (t: number) => facts.pauses.some((p) => t >= p.start - 0.01 && t <= p.end + 0.05);
    for (const c of candidates) {
      expect(inPause(c.start), `start ${c.start}`).toBe(true);
      expect(inPause(c.end), `end ${c.end}`).toBe(true);
      expect(c.reasons).toContain("speech_density");
    }
  });

  it("podcast in a noisy room (noise above silencedetect's threshold): cuts still fall in pauses", async () => {
    const { candidates, facts } = await run({ durationSeconds: 90, seed: 6, noiseFloor: 0.02, pauseSeconds: [0.9, 1.6] }, "podcast");
    expect(candidates.length).toBeGreaterThanOrEqual(1);
    const inPause = (t: number) => facts.pauses.some((p) => t >= p.start - 0.01 && t <= p.end + 0.05);
    for (const c of candidates) {
      expect(inPause(c.start), `start ${c.start}`).toBe(true);
      expect(inPause(c.end), `end ${c.end}`).toBe(true);
    }
  });

  it("lecture: clip boundaries sit on planted scene changes (within a frame) or, where a change falls mid-phrase, in pauses", async () => {
    const { candidates, facts } = await run(MIXED, "lecture", { max_clip_seconds: 35 });
    const frame = 1 / facts.fps;
    const starts = [0, ...facts.sceneChanges];
    const ends = [...facts.sceneChanges, facts.durationSeconds];
    const inPause = (t: number) => facts.pauses.some((p) => t >= p.start && t <= p.end);
    const onChange = (t: number, points: number[]) => Math.min(...points.map((p) => Math.abs(p - t))) <= frame;
    expect(candidates.length).toBeGreaterThanOrEqual(1);
    for (const c of candidates) {
      expect(onChange(c.start, starts) || inPause(c.start), `start ${c.start}`).toBe(true);
      expect(onChange(c.end, ends) || inPause(c.end), `end ${c.end}`).toBe(true);
      expect(onChange(c.start, starts) || onChange(c.end, ends), `clip ${c.start}-${c.end} has a slide-change edge`).toBe(true);
      expect(c.reasons).toContain("scene_change");
    }
  });

  it.each(["gaming", "sports"] as const)("%s: every planted loud burst is found, in the second half of its clip", async (type) => {
    const { candidates, facts } = await run(MIXED, type, { max_clip_seconds: 25 });
    for (const burst of facts.bursts) {
      const clip = candidates.find((c) => burst.start >= c.start && burst.end <= c.end + 0.5);
      expect(clip, `burst at ${burst.start}`).toBeDefined();
      const middle = (clip!.start + clip!.end) / 2;
      expect(burst.start + 0.25).toBeGreaterThanOrEqual(middle);
    }
    expect(candidates[0]!.reasons[0]).toBe(type === "gaming" ? "loudness_peak" : "crowd_loudness");
  });

  it("reframe=auto: one crop centre per scene, on the planted subject", async () => {
    const { candidates, facts } = await run(MIXED, "general", { reframe: "auto" });
    for (const c of candidates) {
      expect(c.crop?.length).toBeGreaterThanOrEqual(1);
      for (const segment of c.crop!) {
        const halfFrame = 0.5 / facts.fps;
        const scene = facts.scenes.find((s) => segment.fromSeconds >= s.start - halfFrame && segment.toSeconds <= s.end + halfFrame);
        expect(scene, `segment ${segment.fromSeconds}-${segment.toSeconds}`).toBeDefined();
        expect(Math.abs(segment.centerX - scene!.subject!.centerX)).toBeLessThan(0.05);
        expect(Math.abs(segment.centerY - scene!.subject!.centerY)).toBeLessThan(0.08);
      }
      // Segments tile the clip: no gap, no overlap.
      expect(c.crop![0]!.fromSeconds).toBeCloseTo(c.start, 6);
      expect(c.crop![c.crop!.length - 1]!.toSeconds).toBeCloseTo(c.end, 6);
    }
  });

  it("reframe=center leaves out the crop plan", async () => {
    const { candidates } = await run(MIXED, "general", { reframe: "center" });
    for (const c of candidates) expect(c.crop).toBeUndefined();
  });

  it("reports monotonic progress that reaches 1", async () => {
    const seen: number[] = [];
    await run(MIXED, "vlog", {}, (f) => seen.push(f));
    expect(seen.length).toBeGreaterThan(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
    expect(seen[seen.length - 1]).toBe(1);
  });

  it.each([2, 12])("scene changes not on keyframes (keyframe every %i s): crop changes and boundaries land on the exact cut frame", async (keyframeIntervalSeconds) => {
    const { candidates, facts } = await run(
      { durationSeconds: 60, sceneChanges: [13.4, 29.8, 47.1], keyframesAtSceneChanges: false, keyframeIntervalSeconds, seed: 8 },
      "lecture",
      { reframe: "auto", min_clip_seconds: 10, max_clip_seconds: 40 },
    );
    const frame = 1 / facts.fps;
    const plannedCuts = [0, ...facts.sceneChanges, facts.durationSeconds];
    const nearestCut = (t: number) => Math.min(...plannedCuts.map((c) => Math.abs(c - t)));
    let checked = 0;
    for (const c of candidates) {
      expect(nearestCut(c.start), `start ${c.start}`).toBeLessThanOrEqual(frame);
      expect(nearestCut(c.end), `end ${c.end}`).toBeLessThanOrEqual(frame);
      for (const segment of c.crop ?? []) {
        expect(nearestCut(segment.fromSeconds), `crop change ${segment.fromSeconds}`).toBeLessThanOrEqual(frame);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(2);
  });

  it("a cancel during the analysis stops both passes and rejects with the abort reason", async () => {
    const { source } = await generatedSource(runner, MIXED);
    const controller = new AbortController();
    const reason = new Error("canceled by test");
    const analysing = analyse(runner, source, "general", ClipConfig.parse({}), {
      signal: controller.signal,
      onProgress: (f) => {
        if (f > 0) controller.abort(reason);
      },
    });
    await expect(analysing).rejects.toBe(reason);
    expect(await ffmpegChildren()).toEqual([]);
  });

  it("no_clips_found for a silent, static source", async () => {
    const spec: MediaSpec = { durationSeconds: 40, audio: "silence", subject: false, seed: 2 };
    for (const type of ["general", "gaming", "podcast"] as const) {
      await expect(run(spec, type)).rejects.toBeInstanceOf(NoClipsFoundError);
    }
  });

  it("no_clips_found for a source shorter than min_clip_seconds", async () => {
    await expect(run({ durationSeconds: 8, seed: 3 }, "general", { min_clip_seconds: 10 })).rejects.toThrow(/shorter than the 10 s minimum/);
  });

  it("a source without audio: visual types still find clips, podcast and lecture fail with no_clips_found saying they need speech", async () => {
    const spec: MediaSpec = { durationSeconds: 60, audio: "none", bursts: [20, 44], sceneChanges: [15, 33, 48], seed: 4 };
    for (const type of ["gaming", "sports", "vlog", "general"] as const) {
      const { candidates, config, facts } = await run(spec, type);
      expectWellFormed(candidates, config, facts.durationSeconds);
      const reasons = candidates.flatMap((c) => c.reasons);
      if (type === "gaming" || type === "sports") expect(reasons).toContain("motion_burst");
      for (const reason of reasons) expect(["motion_burst", "scene_change", "replay_cuts"]).toContain(reason);
    }
    await expect(run(spec, "podcast")).rejects.toThrow(/no audio track; podcast clips are cut on speech/);
    await expect(run(spec, "lecture")).rejects.toThrow(/no audio track; lecture clips are cut on speech/);
  });
});
