/**
 * Face reframing judged from rendered clips. Sources are composed from the
 * photographs shipped inside @vladmandic/face-api (helpers/faces-media.ts);
 * the camera's position is read back from each output frame's top-band ramp
 * and faces are looked for in the output with the engine's own detector.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { probeSource } from "../src/probe.ts";
import { detectFaces } from "../src/reframe/detector.ts";
import { planReframe, windowFractions, type ReframePlan } from "../src/reframe/plan.ts";
import { renderClip } from "../src/render.ts";
import { outputSize } from "../src/render-geometry.ts";
import type { Candidate, SourceInfo } from "../src/types.ts";
import { bandLuma, columnLuma, decodeFrames, gauge, reversals, rows } from "./helpers/faces-judge.ts";
import { compose, DISTRACTOR, distractorX, faceBoxAt, PEOPLE, type Composition, type Placement } from "./helpers/faces-media.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "./helpers/media.ts";

const runner = nativeRunner();
const W = 640;
const H = 360;
/** Output frames are judged at this size (9:16) and rate. */
const OUT_W = 180;
const OUT_H = 320;
const JUDGE_FPS = 5;
/** The ramp band: rows [BAND_TOP, BAND_BOTTOM) of the source; the same share of an output frame's height. */
const BAND = [0.01, 0.1] as const;

let dir: string;
beforeAll(async () => {
  dir = await osTempDir("faces");
});
afterAll(removeTempDirs);

async function source(name: string, composition: Composition): Promise<SourceInfo> {
  const file = path.join(dir, `${name}.mp4`);
  await compose(file, composition);
  return probeSource({
    runner,
    path: file,
    sizeBytes: (await stat(file)).size,
    videoUrl: `https://media.test/${name}.mp4`,
    platformTitle: null,
    maxSourceSeconds: 3600,
    signal: new AbortController().signal,
  });
}

function clipOf(seconds: number, activityX = 0.5): Candidate {
  return { start: 0, end: seconds, score: 0.5, reasons: ["test"], crop: [{ fromSeconds: 0, toSeconds: seconds, centerX: activityX, centerY: 0.5 }] };
}

async function planAndRender(src: SourceInfo, candidate: Candidate, overrides: Partial<ClipConfig>, name: string): Promise<{ plan: ReframePlan; file: string }> {
  const config = ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 10, resolution: 720, aspect_ratio: "9:16", ...overrides });
  const signal = new AbortController().signal;
  const plan = await planReframe({ runner, source: src, candidate, config, output: outputSize(config, src), rawPath: path.join(dir, `${name}.rgb`), signal, onProgress: () => {} });
  const file = path.join(dir, `${name}-out.mp4`);
  await renderClip(runner, { source: src, candidate, config, outPath: file, thumbnailPath: path.join(dir, `${name}.jpg`), signal, onProgress: () => {}, plan });
  return { plan, file };
}

/** The camera's centre (fraction of the source width) in every judged output frame, for windows `window` wide. */
async function cameraTrack(src: SourceInfo, out: { times: number[]; frames: Uint8Array[] }, window: number, top = 0, height = OUT_H): Promise<number[]> {
  const [first] = (await decodeFrames(src.path, 1, W, H)).frames;
  const ruler = gauge(columnLuma(first!, W, Math.round(BAND[0] * H), Math.round(BAND[1] * H)), window);
  return out.frames.map((f) => ruler(bandLuma(f, OUT_W, top + Math.round(BAND[0] * height), top + Math.round(BAND[1] * height))));
}

function insideWindow(box: { x: number; width: number }, centre: number, window: number, slack = 0.01): boolean {
  const left = (centre - window / 2) * W;
  const right = (centre + window / 2) * W;
  return box.x >= left - slack * W && box.x + box.width <= right + slack * W;
}

describe("reframe: faces", { timeout: 240_000 }, () => {
  it("keeps a walking face in the frame, ignores a larger, faster distractor, holds while the face is lost", async () => {
    const walker: Placement = { person: PEOPLE.anna, width: 130, path: [[0, 30, 110], [4, 450, 150], [7, 450, 150]], hidden: [5, 5.6] };
    const src = await source("walk", { seconds: 7, width: W, height: H, fps: 15, distractor: true, people: [walker] });
    const { plan, file } = await planAndRender(src, clipOf(7), { reframe: "faces" }, "walk");
    expect(plan).toMatchObject({ used: "faces", facesCount: 1 });

    const out = await decodeFrames(file, JUDGE_FPS, OUT_W, OUT_H);
    const window = windowFractions(9 / 16, W, H).width;
    const camera = await cameraTrack(src, out, window);
    const visible = out.times.map((t, i) => ({ t, i })).filter(({ t }) => t < 5 || t >= 5.6);
    const inside = visible.filter(({ t, i }) => insideWindow(faceBoxAt(walker, t), camera[i]!, window));
    expect(inside.length / visible.length, `face inside the output frame (camera ${camera.map((c) => c.toFixed(2)).join(" ")})`).toBeGreaterThanOrEqual(0.95);

    // The detector, run on what the viewer sees, finds the face too.
    let seen = 0;
    for (const { i } of visible) if ((await detectFaces(out.frames[i]!, OUT_W, OUT_H)).length > 0) seen++;
    expect(seen / visible.length).toBeGreaterThanOrEqual(0.9);

    // While the face stands still (from 4 s, including while it is hidden) the camera stands still,
    // though the distractor sweeps the whole frame back and forth.
    const still = out.times.map((t, i) => (t >= 4.4 ? camera[i]! : null)).filter((c): c is number => c !== null);
    expect(Math.max(...still) - Math.min(...still)).toBeLessThan(0.02);
    const distractorSpan = out.times.filter((t) => t >= 4.4).map((t) => (distractorX(t, W) + DISTRACTOR.width / 2) / W);
    expect(Math.max(...distractorSpan) - Math.min(...distractorSpan)).toBeGreaterThan(0.5);
    // The walk goes one way: the camera never turns back.
    expect(reversals(camera, 0.006)).toBe(0);
  });

  it("layout split: two faces, one in each half, in every sampled frame", async () => {
    const left: Placement = { person: PEOPLE.anna, width: 120, path: [[0, 20, 120], [6, 80, 120]] };
    const right: Placement = { person: PEOPLE.bea, width: 120, path: [[0, 500, 110], [6, 440, 110]] };
    const src = await source("pair", { seconds: 6, width: W, height: H, fps: 15, people: [left, right] });
    const { plan, file } = await planAndRender(src, clipOf(6), { reframe: "faces", layout: "split" }, "pair");
    expect(plan.used).toBe("faces");
    expect(plan.views).toHaveLength(2);
    expect(plan.facesCount).toBe(2);

    const out = await decodeFrames(file, JUDGE_FPS, OUT_W, OUT_H);
    const half = OUT_H / 2;
    for (const [i, frame] of out.frames.entries()) {
      const top = await detectFaces(rows(frame, OUT_W, 0, half), OUT_W, half);
      const bottom = await detectFaces(rows(frame, OUT_W, half, OUT_H), OUT_W, half);
      expect(top.length, `a face in the top half at ${out.times[i]} s`).toBeGreaterThan(0);
      expect(bottom.length, `a face in the bottom half at ${out.times[i]} s`).toBeGreaterThan(0);
    }
    // The left person is on top, the right one below: read from each half's own ramp.
    const window = windowFractions(OUT_W / half, W, H).width;
    const topCamera = await cameraTrack(src, out, window, 0, half);
    const bottomCamera = await cameraTrack(src, out, window, half, half);
    for (const [i, t] of out.times.entries()) {
      expect(insideWindow(faceBoxAt(left, t), topCamera[i]!, window), `left face in the top half at ${t}`).toBe(true);
      expect(insideWindow(faceBoxAt(right, t), bottomCamera[i]!, window), `right face in the bottom half at ${t}`).toBe(true);
    }
  });

  it("no face: falls back to the activity plan and says so", async () => {
    const src = await source("empty", { seconds: 6, width: W, height: H, fps: 15, distractor: true, people: [] });
    const { plan, file } = await planAndRender(src, clipOf(6, 0.3), { reframe: "faces" }, "empty");
    expect(plan).toMatchObject({ used: "activity", facesCount: 0 });
    const out = await decodeFrames(file, JUDGE_FPS, OUT_W, OUT_H);
    const camera = await cameraTrack(src, out, windowFractions(9 / 16, W, H).width);
    for (const c of camera) expect(Math.abs(c - 0.3)).toBeLessThan(0.02);
  });

  it("a crowd: counts the faces, frames people, and stays still on a still picture", async () => {
    // sample4.jpg: four people side by side, filling the frame below the ramp band (the camera gauge).
    const group = { photo: "sample4.jpg", crop: { x: 0, y: 0, width: 1920, height: 1080 }, face: { x: 0, y: 0, width: 1, height: 1 } };
    const crowd: Placement = { person: group, width: 560, path: [[0, 40, 44]] };
    const src = await source("crowd", { seconds: 6, width: W, height: H, fps: 15, people: [crowd] });
    const { plan, file } = await planAndRender(src, clipOf(6), { reframe: "auto" }, "crowd");
    expect(plan.used).toBe("faces");
    expect(plan.facesCount).toBeGreaterThanOrEqual(3);
    const out = await decodeFrames(file, JUDGE_FPS, OUT_W, OUT_H);
    let seen = 0;
    for (const frame of out.frames) if ((await detectFaces(frame, OUT_W, OUT_H)).length > 0) seen++;
    expect(seen / out.frames.length).toBeGreaterThanOrEqual(0.95);
    const camera = await cameraTrack(src, out, windowFractions(9 / 16, W, H).width);
    expect(reversals(camera, 0.006)).toBe(0);
    expect(Math.max(...camera) - Math.min(...camera)).toBeLessThan(0.02);
  });

  it("tiny faces below the detector's reach: falls back to activity rather than guessing", async () => {
    const tiny: Placement = { person: PEOPLE.anna, width: 34, path: [[0, 100, 200], [6, 500, 200]] };
    const src = await source("tiny", { seconds: 6, width: W, height: H, fps: 15, people: [tiny] });
    const { plan } = await planAndRender(src, clipOf(6, 0.4), { reframe: "faces" }, "tiny");
    expect(plan).toMatchObject({ used: "activity", facesCount: 0 });
  });

  it("a picture stored rotated (display rotation tag): the face is followed in the upright picture", async () => {
    const walker: Placement = { person: PEOPLE.bea, width: 130, path: [[0, 480, 120], [5, 60, 120], [6, 60, 120]] };
    const src = await source("rotated", { seconds: 6, width: W, height: H, fps: 15, people: [walker], rotated: true });
    expect(src.width).toBe(H);
    const { plan, file } = await planAndRender(src, clipOf(6), { reframe: "auto" }, "rotated");
    expect(plan).toMatchObject({ used: "faces", facesCount: 1 });
    const out = await decodeFrames(file, JUDGE_FPS, OUT_W, OUT_H);
    const window = windowFractions(9 / 16, W, H).width;
    const camera = await cameraTrack(src, out, window);
    const inside = out.times.filter((t, i) => insideWindow(faceBoxAt(walker, t), camera[i]!, window));
    expect(inside.length / out.times.length).toBeGreaterThanOrEqual(0.95);
  });
});
