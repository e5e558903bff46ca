/**
 * reframe fit and reframe auto's choice, judged from rendered clips: a fit
 * clip must show the whole source frame (compared block by block with the
 * source at the same moment) over a backdrop that is blurred (no sharp edges)
 * and darker than the source; auto must choose fit for a screen recording
 * and a still slide, and the region of activity for a moving subject that is
 * not a person.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { probeSource } from "../../src/source/probe.ts";
import { TEXT_EDGE_SHARE } from "../../src/reframe/content.ts";
import { framingReport } from "../../src/reframe/framing-report.ts";
import { planReframe, type ReframePlan } from "../../src/reframe/plan.ts";
import { renderClip } from "../../src/render/index.ts";
import { outputSize } from "../../src/render/geometry.ts";
import type { Candidate, SourceInfo } from "../../src/shared/types.ts";
import { bandLuma, decodeFrames, type DecodedFrames } from "../helpers/faces-judge.ts";
import { compose } from "../helpers/faces-media.ts";
import { FFMPEG, FFPROBE, nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import { screenRecording, stillSlide, storedTurned } from "../helpers/screen-media.ts";

const runner = nativeRunner();
const W = 640;
const H = 360;
/** Output frames are judged at this size (9:16 of a 720x1280 clip) and rate. */
const OUT_W = 180;
const OUT_H = 320;
const JUDGE_FPS = 2;
/** Where the fitted source sits in a judged frame: the source's shape at the output's width, centred. */
const FRONT_H = Math.round((OUT_W * H) / W);
const FRONT_TOP = Math.round((OUT_H - FRONT_H) / 2);
/** Blocks (pixels of a judged frame) in which fitted picture and source are compared: small shifts from rounding average out. */
const BLOCK = 6;

let dir: string;
beforeAll(async () => {
  dir = await osTempDir("framing");
});
afterAll(removeTempDirs);

async function probed(file: string, name: string): Promise<SourceInfo> {
  return probeSource({ runner, path: file, sizeBytes: (await stat(file)).size, videoUrl: `https://media.test/${name}.mp4`, platformTitle: null, maxSourceSeconds: 3600, signal: new AbortController().signal });
}

function clipOf(seconds: number, activityX = 0.5): Candidate {
  return { start: 0, end: seconds, score: 0.5, reasons: ["test"], crop: [{ fromSeconds: 0, toSeconds: seconds, centerX: activityX, centerY: 0.5 }] };
}

function configOf(overrides: Partial<ClipConfig>): ClipConfig {
  return ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 60, resolution: 720, aspect_ratio: "9:16", captions: "off", ...overrides });
}

async function plan(src: SourceInfo, candidate: Candidate, config: ClipConfig, name: string): Promise<ReframePlan> {
  return planReframe({ runner, source: src, candidate, config, output: outputSize(config, src), speech: null, rawPath: path.join(dir, `${name}.rgb`), signal: new AbortController().signal, onProgress: () => {} });
}

/** Renders the clip and decodes its frames at the judged size (turned a quarter, judged as its transpose, when `across`: a landscape output). */
async function render(src: SourceInfo, candidate: Candidate, config: ClipConfig, p: ReframePlan, name: string, across = false): Promise<DecodedFrames> {
  const file = path.join(dir, `${name}-out.mp4`);
  const signal = new AbortController().signal;
  await renderClip(runner, { source: src, candidate, config, outPath: file, thumbnailPath: path.join(dir, `${name}.jpg`), signal, onProgress: () => {}, plan: p });
  return across ? transposed(await decodeFrames(file, JUDGE_FPS, OUT_H, OUT_W)) : decodeFrames(file, JUDGE_FPS, OUT_W, OUT_H);
}

/** Frames mirrored across their diagonal (rows become columns), so a picture between side bands is judged as one between top and bottom bands. */
function transposed(d: DecodedFrames): DecodedFrames {
  const frames = d.frames.map((f) => {
    const out = new Uint8Array(f.length);
    for (let y = 0; y < d.height; y++) {
      for (let x = 0; x < d.width; x++) {
        const from = (y * d.width + x) * 3;
        const to = (x * d.height + y) * 3;
        out[to] = f[from]!;
        out[to + 1] = f[from + 1]!;
        out[to + 2] = f[from + 2]!;
      }
    }
    return out;
  });
  return { width: d.height, height: d.width, times: d.times, frames };
}

function luma(frame: Uint8Array, width: number, x: number, y: number): number {
  const i = (y * width + x) * 3;
  return 0.299 * frame[i]! + 0.587 * frame[i + 1]! + 0.114 * frame[i + 2]!;
}

/** Mean luma of BLOCK x BLOCK blocks of rows [top, top + height) of a frame. */
function blocks(frame: Uint8Array, width: number, top: number, height: number): number[] {
  const out: number[] = [];
  for (let by = 0; by + BLOCK <= height; by += BLOCK) {
    for (let bx = 0; bx + BLOCK <= width; bx += BLOCK) {
      let sum = 0;
      for (let y = 0; y < BLOCK; y++) for (let x = 0; x < BLOCK; x++) sum += luma(frame, width, bx + x, top + by + y);
      out.push(sum / (BLOCK * BLOCK));
    }
  }
  return out;
}

/** Share of horizontally neighbouring pixels in rows [top, bottom) that differ by 32 grey levels or more. */
function sharpShare(frame: Uint8Array, width: number, top: number, bottom: number): number {
  let sharp = 0;
  for (let y = top; y < bottom; y++) for (let x = 1; x < width; x++) if (Math.abs(luma(frame, width, x, y) - luma(frame, width, x - 1, y)) >= 32) sharp++;
  return sharp / ((bottom - top) * (width - 1));
}

/**
 * Judges every frame of a fit clip: the middle band matches the whole source
 * frame (mean block difference under 12 grey levels, as the source would be
 * shown with no crop), and the bands above and below are a backdrop with no
 * sharp edge, darker than the source but not black (the backdrop shows the
 * frame's middle, which may be darker than the whole: a tenth of the source's
 * brightness at least). Returns the share of
 * frames that pass. `across`: a portrait source in a landscape output, both
 * judged transposed (render's `across`).
 */
async function fitShare(src: SourceInfo, out: DecodedFrames, across = false): Promise<number> {
  const source = across ? transposed(await decodeFrames(src.path, JUDGE_FPS, FRONT_H, OUT_W)) : await decodeFrames(src.path, JUDGE_FPS, OUT_W, FRONT_H);
  const n = Math.min(out.frames.length, source.frames.length);
  let good = 0;
  for (let i = 0; i < n; i++) {
    const frame = out.frames[i]!;
    // Two rows of slack at each edge of the fitted picture (rounding, and the scaler's edge).
    const shown = blocks(frame, OUT_W, FRONT_TOP + 2, FRONT_H - 4);
    const truth = blocks(source.frames[i]!, OUT_W, 2, FRONT_H - 4);
    const difference = shown.reduce((sum, v, k) => sum + Math.abs(v - truth[k]!), 0) / shown.length;
    const sourceLuma = bandLuma(source.frames[i]!, OUT_W, 0, FRONT_H);
    const backdrop = [bandLuma(frame, OUT_W, 0, FRONT_TOP - 4), bandLuma(frame, OUT_W, FRONT_TOP + FRONT_H + 4, OUT_H)];
    const blurred = Math.max(sharpShare(frame, OUT_W, 0, FRONT_TOP - 4), sharpShare(frame, OUT_W, FRONT_TOP + FRONT_H + 4, OUT_H)) < 0.002;
    const darker = backdrop.every((l) => l < 0.7 * sourceLuma && l > 0.1 * sourceLuma);
    if (difference < 12 && blurred && darker) good++;
  }
  return good / n;
}

describe("reframe: fit and auto's choice", { timeout: 240_000 }, () => {
  it("auto on a screen recording of scrolling text: fit, the whole frame over a blurred, darkened backdrop in every frame", async () => {
    const file = path.join(dir, "screen.mp4");
    await screenRecording(file, { seconds: 5, width: W, height: H, fps: 15 });
    const src = await probed(file, "screen");
    const config = configOf({});
    expect(config.reframe).toBe("auto");
    const p = await plan(src, clipOf(5, 0.2), config, "screen");
    expect(p).toMatchObject({ used: "fit", facesCount: 0, content: { framing: "fit", reason: "text" } });
    expect(p.content!.textDensity).toBeGreaterThanOrEqual(TEXT_EDGE_SHARE);
    const out = await render(src, clipOf(5, 0.2), config, p, "screen");
    expect(await fitShare(src, out)).toBe(1);
  });

  it("reframe fit, asked for, on a still slide: nothing detected, the slide whole in every frame", async () => {
    const file = path.join(dir, "slide.mp4");
    await stillSlide(file, { seconds: 5, width: W, height: H, fps: 15 });
    const src = await probed(file, "slide");
    const config = configOf({ reframe: "fit" });
    const p = await plan(src, clipOf(5), config, "slide-fit");
    expect(p).toMatchObject({ used: "fit", facesCount: 0, frames: 0 });
    // The clip's reported framing crops nothing: the window is the whole frame.
    expect(framingReport(p.views, src, outputSize(config, src), 5)).toMatchObject({ crop_width: W, crop_height: H, split: false });
    const out = await render(src, clipOf(5), config, p, "slide");
    expect(await fitShare(src, out)).toBe(1);
    // The same slide under auto: no person, nothing moves, so fit as well (for stillness, not text).
    const auto = await plan(src, clipOf(5), configOf({ reframe: "auto" }), "slide-auto");
    expect(auto).toMatchObject({ used: "fit", content: { reason: "still" } });
    expect(auto.content!.stillShare).toBeGreaterThanOrEqual(0.8);
  });

  it("fit of a picture stored turned (a display rotation, as phones record): the upright frame whole in every frame", async () => {
    const upright = path.join(dir, "turned-upright.mp4");
    await screenRecording(upright, { seconds: 4, width: W, height: H, fps: 15 });
    const file = path.join(dir, "turned.mp4");
    await storedTurned(upright, file);
    const src = await probed(file, "turned");
    // Stored portrait, shown landscape: the fitted picture must be the upright one, not the stored one squeezed.
    expect({ width: src.width, height: src.height, quarter: Math.abs(src.rotation ?? 0) }).toEqual({ width: H, height: W, quarter: 90 });
    const config = configOf({ reframe: "fit" });
    const p = await plan(src, clipOf(4), config, "turned");
    // The clip's reported framing is of the picture as shown: the whole upright frame.
    expect(framingReport(p.views, src, outputSize(config, src), 4)).toMatchObject({ source_width: W, source_height: H, crop_width: W, crop_height: H });
    // "original" keeps the shape as shown: landscape.
    expect(outputSize({ aspect_ratio: "original", resolution: 720 }, src)).toEqual({ width: W, height: H });
    const out = await render(src, clipOf(4), config, p, "turned");
    expect(await fitShare(src, out)).toBe(1);
  });

  it("fit of a portrait picture into a landscape output: the picture whole between blurred side bands", async () => {
    const file = path.join(dir, "portrait.mp4");
    await screenRecording(file, { seconds: 4, width: H, height: W, fps: 15 });
    const src = await probed(file, "portrait");
    const config = configOf({ reframe: "fit", aspect_ratio: "16:9" });
    const p = await plan(src, clipOf(4), config, "portrait");
    const out = await render(src, clipOf(4), config, p, "portrait", true);
    expect(await fitShare(src, out, true)).toBe(1);
  });

  it("fit of a 30 fps source with dropped frames: the same frames at the same times as a centre crop, the backdrop following the picture", async () => {
    // The backdrop is made from at most 15 source frames a second; the stack must still give a frame for every source frame at the
    // source's times (here irregular: every fifth frame is missing), as any other framing does, and the bands must brighten as the
    // picture does.
    const file = path.join(dir, "uneven.mp4");
    const made = await runProcess({
      command: FFMPEG,
      args: [
        "-nostdin", "-v", "error", "-y",
        "-f", "lavfi", "-i", `nullsrc=s=${W}x${H}:r=30:d=3,format=yuv420p,geq=lum='60+150*T/3':cb=128:cr=128,select='not(eq(mod(n\\,5)\\,3))'`,
        "-fps_mode", "passthrough", "-c:v", "libx264", "-preset", "ultrafast", file,
      ],
      timeoutMs: 60_000,
    });
    expect(made.exitCode, made.stderrTail).toBe(0);
    const src = await probed(file, "uneven");
    const times = async (f: string) => {
      const r = await runProcess({ command: FFPROBE, args: ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", f], timeoutMs: 30_000 });
      expect(r.exitCode, r.stderrTail).toBe(0);
      return r.stdout.trim().split("\n").map(Number);
    };
    const sourceTimes = await times(file);
    // About 72 of 90 frames, with gaps of two frame times among gaps of one.
    const gaps = sourceTimes.slice(1).map((t, i) => t - sourceTimes[i]!);
    expect(gaps.filter((g) => g > 0.05).length).toBeGreaterThanOrEqual(15);
    expect(gaps.filter((g) => g < 0.04).length).toBeGreaterThanOrEqual(45);
    // The same clip cut with a plain centre crop (one picture in, one out) gives the frames and times the fit must give.
    const rendered = async (reframe: "fit" | "center") => {
      const config = configOf({ reframe });
      const out = path.join(dir, `uneven-${reframe}.mp4`);
      await renderClip(runner, { source: src, candidate: clipOf(3), config, outPath: out, thumbnailPath: path.join(dir, `uneven-${reframe}.jpg`), signal: new AbortController().signal, onProgress: () => {}, plan: await plan(src, clipOf(3), config, `uneven-${reframe}`) });
      return out;
    };
    const out = await rendered("fit");
    const [fitTimes, centerTimes] = [await times(out), await times(await rendered("center"))];
    expect(fitTimes.length).toBeGreaterThanOrEqual(sourceTimes.length);
    expect(fitTimes).toEqual(centerTimes);
    const frames = await decodeFrames(out, 10, OUT_W, OUT_H);
    const top = frames.frames.map((f) => bandLuma(f, OUT_W, 0, FRONT_TOP - 4));
    // The source brightens by 50 grey levels a second: the backdrop (half as bright) rises at every judged step of 0.1 s.
    expect(top.length).toBeGreaterThanOrEqual(28);
    expect(top.slice(1).every((l, i) => l > top[i]!)).toBe(true);
  });

  it("auto with a moving subject that is not a person: the region of activity, not fit", async () => {
    const file = path.join(dir, "box.mp4");
    await compose(file, { seconds: 5, width: W, height: H, fps: 15, distractor: true, people: [] });
    const src = await probed(file, "box");
    const p = await plan(src, clipOf(5, 0.3), configOf({ reframe: "auto" }), "box");
    expect(p).toMatchObject({ used: "activity", facesCount: 0, content: { framing: "activity", reason: "motion" } });
  });
});
