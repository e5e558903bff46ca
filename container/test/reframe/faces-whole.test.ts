/**
 * reframe: faces keeps a detected face whole, judged from the rendered frames
 * alone: each face's cut-out is framed in a border with a colour of its own
 * on each side (helpers/faces-border.ts), and the face must lie wholly inside the
 * output frame in at least 95% of the judged frames, for steady drift both
 * ways, slow and as fast as a third of the frame's width a second, for an
 * abrupt jump, and beside a larger, faster orange block that is not a face.
 * The camera (read from the background's ramp) never turns back while the
 * face moves one way, and stands still while the face does. layout split with
 * two people keeps one whole in each half.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { probeSource } from "../../src/source/probe.ts";
import { planReframe, windowFractions } from "../../src/reframe/plan.ts";
import { renderClip } from "../../src/render/index.ts";
import { outputSize } from "../../src/render/geometry.ts";
import type { Candidate, SourceInfo } from "../../src/shared/types.ts";
import { BORDER, faceColumns, SECOND_BORDER, wholeFaceShare } from "../helpers/faces-border.ts";
import { cameraTrack, decodeFrames, reversals, type DecodedFrames } from "../helpers/faces-judge.ts";
import { compose, PEOPLE, type Keyframes, type Placement } from "../helpers/faces-media.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";

const runner = nativeRunner();
const W = 640;
const H = 360;
const OUT_W = 180;
const OUT_H = 320;
/** Output pixels per source pixel: a 9:16 window is as tall as the 16:9 source. */
const SCALE = OUT_H / H;
const JUDGE_FPS = 5;
const SINGLE = windowFractions(9 / 16, W, H).width;
/** A third of the frame's width a second: the fastest steady drift the camera must keep whole. */
const FAST = W / 3;

let dir: string;
beforeAll(async () => {
  dir = await osTempDir("faces-whole");
});
afterAll(removeTempDirs);

function walker(path: Keyframes): Placement {
  return { person: PEOPLE.anna, width: 130, path, border: { color: BORDER.color, right: BORDER.right, size: BORDER.size } };
}

async function judged(
  name: string,
  seconds: number,
  placement: Placement | Placement[],
  distractor: boolean,
  options: { config?: Partial<ClipConfig>; speech?: { start: number; end: number }[]; faces?: number } = {},
): Promise<{ out: DecodedFrames; camera: number[]; src: SourceInfo }> {
  const file = path.join(dir, `${name}.mp4`);
  const people = Array.isArray(placement) ? placement : [placement];
  await compose(file, { seconds, width: W, height: H, fps: 15, distractor, people });
  const src = await probeSource({ runner, path: file, sizeBytes: (await stat(file)).size, videoUrl: `https://media.test/${name}.mp4`, platformTitle: null, maxSourceSeconds: 3600, signal: new AbortController().signal });
  const config = ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 60, resolution: 720, aspect_ratio: "9:16", captions: "off", reframe: "faces", ...options.config });
  const candidate: Candidate = { start: 0, end: seconds, score: 0.5, reasons: ["test"], crop: [{ fromSeconds: 0, toSeconds: seconds, centerX: 0.5, centerY: 0.5 }] };
  const signal = new AbortController().signal;
  const plan = await planReframe({ runner, source: src, candidate, config, output: outputSize(config, src), speech: options.speech ?? null, rawPath: path.join(dir, `${name}.rgb`), signal, onProgress: () => {} });
  expect(plan).toMatchObject({ used: "faces", facesCount: options.faces ?? 1 });
  const outPath = path.join(dir, `${name}-out.mp4`);
  await renderClip(runner, { source: src, candidate, config, outPath, thumbnailPath: path.join(dir, `${name}.jpg`), signal, onProgress: () => {}, plan });
  const out = await decodeFrames(outPath, JUDGE_FPS, OUT_W, OUT_H);
  return { out, camera: await cameraTrack({ path: src.path, width: W, height: H }, out, SINGLE), src };
}

function describeFrames(placement: Placement, out: DecodedFrames): string {
  return faceColumns({ placement, out, scale: SCALE }).map((c, i) => `${out.times[i]!.toFixed(1)}:${c ? `${c.left.toFixed(0)}-${c.right.toFixed(0)}` : "none"}`).join(" ");
}

function spread(values: number[]): number {
  return Math.max(...values) - Math.min(...values);
}

describe("reframe: faces keeps the face whole", { timeout: 240_000 }, () => {
  it("a slow steady drift left to right beside a larger moving block", async () => {
    const p = walker([[0, 30, 110], [6, 414, 110]]);
    const { out, camera } = await judged("slow-right", 6, p, true);
    expect(wholeFaceShare({ placement: p, out, scale: SCALE }), describeFrames(p, out)).toBeGreaterThanOrEqual(0.95);
    expect(reversals(camera, 0.006)).toBe(0);
  });

  it("a fast drift right to left (a third of the frame a second), then still", async () => {
    const p = walker([[0, 480, 110], [1, 480, 110], [1 + 470 / FAST, 10, 110], [5.5, 10, 110]]);
    const { out, camera } = await judged("fast-left", 5.5, p, false);
    expect(wholeFaceShare({ placement: p, out, scale: SCALE }), describeFrames(p, out)).toBeGreaterThanOrEqual(0.95);
    expect(reversals(camera, 0.006)).toBe(0);
    // Still while the face is: before it sets off, and from half a second after it stops.
    expect(spread(camera.filter((_, i) => out.times[i]! < 0.8))).toBeLessThan(0.02);
    expect(spread(camera.filter((_, i) => out.times[i]! >= 1 + 470 / FAST + 0.8))).toBeLessThan(0.02);
  });

  it("a fast drift left to right beside a larger moving block", async () => {
    const p = walker([[0, 10, 110], [1, 10, 110], [1 + 470 / FAST, 480, 110], [5.5, 480, 110]]);
    const { out, camera } = await judged("fast-right", 5.5, p, true);
    expect(wholeFaceShare({ placement: p, out, scale: SCALE }), describeFrames(p, out)).toBeGreaterThanOrEqual(0.95);
    expect(reversals(camera, 0.006)).toBe(0);
  });

  it("an abrupt jump from one side to the other", async () => {
    const p = walker([[0, 40, 120], [2.5, 40, 120], [2.55, 470, 120], [6, 470, 120]]);
    const { out, camera } = await judged("jump", 6, p, false);
    expect(wholeFaceShare({ placement: p, out, scale: SCALE }), describeFrames(p, out)).toBeGreaterThanOrEqual(0.95);
    expect(spread(camera.filter((_, i) => out.times[i]! >= 3.5))).toBeLessThan(0.02);
  });
});

describe("two people", { timeout: 240_000 }, () => {
  // A half of a 180x320 judged frame is 180x160: a window as tall as the source.
  const HALF = OUT_H / 2;
  const HALF_SCALE = HALF / H;

  it("two still faces far apart under one voice-over (no mouth moves): one whole in each half in every frame", async () => {
    const left = walker([[0, 30, 110]]);
    const right: Placement = { person: PEOPLE.cara, width: 130, path: [[0, 480, 110]], border: { ...SECOND_BORDER } };
    const { out } = await judged("split-still", 5, [left, right], false, { config: { layout: "split" }, speech: [{ start: 0, end: 5 }], faces: 2 });
    const share = (p: Placement, top: number) => wholeFaceShare({ placement: p, out, scale: HALF_SCALE, top, height: HALF });
    const leftTop = share(left, 0);
    const rightBottom = share(right, HALF);
    const rightTop = share(right, 0);
    const leftBottom = share(left, HALF);
    // One person per half, whichever is on top.
    expect(Math.max(Math.min(leftTop, rightBottom), Math.min(rightTop, leftBottom)), `left top ${leftTop}, right bottom ${rightBottom}, right top ${rightTop}, left bottom ${leftBottom}`).toBeGreaterThanOrEqual(0.95);
  });

  it("side by side but too far apart for one frame: one of them whole, never the two cut in half", async () => {
    // The face boxes span about 1.2 windows: framing them as a pair would cut both.
    const left = walker([[0, 150, 110]]);
    const right: Placement = { person: PEOPLE.cara, width: 130, path: [[0, 335, 110]], border: { ...SECOND_BORDER } };
    const { out } = await judged("side-by-side", 5, [left, right], false, { faces: 2 });
    const leftWhole = wholeFaceShare({ placement: left, out, scale: SCALE });
    const rightWhole = wholeFaceShare({ placement: right, out, scale: SCALE });
    expect(Math.max(leftWhole, rightWhole), `left ${leftWhole}, right ${rightWhole}`).toBeGreaterThanOrEqual(0.95);
  });
});
