/**
 * Punch-in zooms end to end on a generated source: espeak-ng speech with one
 * loud sentence over a black picture holding a white square; the analysis
 * finds the emphasis, planZooms turns it into a zoom, and the rendered frames
 * show the square larger around the zoom and at its plain size elsewhere.
 */
import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { analyse } from "../../src/analyse/index.ts";
import { windowFractions } from "../../src/reframe/plan.ts";
import { constantPath } from "../../src/reframe/path.ts";
import { planZooms, ZOOM_SCALE, type Zoom } from "../../src/reframe/zoom.ts";
import { renderClipVideo } from "../../src/render/index.ts";
import { outputSize } from "../../src/render/geometry.ts";
import { probeSource } from "../../src/source/probe.ts";
import type { Candidate, SourceInfo } from "../../src/shared/types.ts";
import { greyFrameAt } from "../helpers/frames.ts";
import { FFMPEG, nativeRunner, tempDir } from "../helpers/media.ts";

const run = promisify(execFile);
const runner = nativeRunner();
const SIDE = 640;
const SQUARE = 200;
const OUT = 360;

let dir: string;
let source: SourceInfo;
let moments: { start: number; end: number }[] = [];

async function speech(text: string, file: string): Promise<void> {
  await run("espeak-ng", ["-v", "en", "-s", "150", "-w", file, text]);
}

beforeAll(async () => {
  dir = await tempDir("zoom-render");
  const quiet = path.join(dir, "quiet.wav");
  const loud = path.join(dir, "loud.wav");
  await speech("We talked about the weather and the trains and the small things of the day, then we walked home slowly along the river.", quiet);
  await speech("And then it was amazing!", loud);
  const file = path.join(dir, "source.mp4");
  // Quiet speech, the loud sentence (+12 dB), quiet speech again; a white square on black.
  await run(FFMPEG, [
    "-nostdin", "-loglevel", "error", "-y",
    "-f", "lavfi", "-i", `color=black:s=${SIDE}x${SIDE}:r=25,drawbox=x=${(SIDE - SQUARE) / 2}:y=${(SIDE - SQUARE) / 2}:w=${SQUARE}:h=${SQUARE}:color=white:t=fill`,
    "-i", quiet, "-i", loud, "-i", quiet,
    "-filter_complex", "[1:a]volume=-12dB[a1];[2:a]volume=0dB[a2];[3:a]volume=-12dB[a3];[a1][a2][a3]concat=n=3:v=0:a=1,aresample=48000[a]",
    "-map", "0:v", "-map", "[a]", "-shortest", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", file,
  ]);
  source = await probeSource({ runner, path: file, sizeBytes: (await stat(file)).size, videoUrl: "https://media.test/zoom.mp4", platformTitle: null, maxSourceSeconds: 3600, signal: new AbortController().signal });
  await analyse(runner, source, "podcast", ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 30 }), {
    signal: new AbortController().signal,
    onProgress: () => {},
    onEmphasis: (spans) => (moments = spans),
  });
}, 300_000);

/** The white square's width in a rendered frame: its widest run of bright pixels on the middle row. */
async function squareWidth(file: string, seconds: number): Promise<number> {
  const pixels = await greyFrameAt(file, seconds, OUT, OUT);
  const row = pixels.subarray((OUT / 2) * OUT, (OUT / 2 + 1) * OUT);
  return row.filter((v) => v > 128).length;
}

async function render(config: Partial<ClipConfig>, zooms: Zoom[], name: string): Promise<string> {
  const parsed = ClipConfig.parse({ aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 30, ...config });
  const candidate: Candidate = { start: 0, end: source.durationSeconds, score: 1, reasons: ["speech_density"] };
  const outPath = path.join(dir, `${name}.mp4`);
  await renderClipVideo(runner, { source, candidate, config: parsed, outPath, signal: new AbortController().signal, onProgress: () => {}, plan: { views: { single: constantPath(0.5, 0.5), zooms } } });
  return outPath;
}

describe("punch-in zoom", () => {
  it("finds the loud sentence as emphasis and pushes in there, not elsewhere", async () => {
    expect(moments.length, "emphatic moments").toBeGreaterThan(0);
    const size = outputSize(ClipConfig.parse({ aspect_ratio: "1:1", resolution: 720 }), source);
    expect(size.width).toBe(720);
    const zooms = planZooms({ moments, duration: source.durationSeconds, path: constantPath(0.5, 0.5), window: windowFractions(1, SIDE, SIDE), faces: [] });
    expect(zooms.length).toBeGreaterThan(0);
    const zoom = zooms[0]!;
    expect(zoom.scale).toBeCloseTo(ZOOM_SCALE, 5);
    const zoomed = await render({ zoom: "emphasis" }, zooms, "zoomed");
    const plain = (SQUARE * 720) / SIDE;
    const held = (zoom.start + zoom.end) / 2;
    // The frames are read at OUT pixels: the square scales with it.
    const scaleAt = async (t: number) => (await squareWidth(zoomed, t)) / ((plain * OUT) / 720);
    expect(await scaleAt(held)).toBeGreaterThan(1.1);
    expect(await scaleAt(held)).toBeLessThan(1.2);
    const before = zoom.start - 1;
    if (before > 0) expect(Math.abs((await scaleAt(before)) - 1)).toBeLessThan(0.03);
    const after = zooms[1] ? Math.min(zoom.end + 1, zooms[1].start - 0.2) : Math.min(zoom.end + 1, source.durationSeconds - 0.3);
    expect(Math.abs((await scaleAt(after)) - 1)).toBeLessThan(0.03);
  }, 300_000);

  it("keeps a face box near the window's edge whole: the zoom is lowered or left out", () => {
    const window = windowFractions(1, SIDE, SIDE);
    const face = { t: 1, box: { x: 0.05, y: 0.4, width: 0.2, height: 0.2 } };
    const zooms = planZooms({ moments: [{ start: 0.5, end: 1.5 }], duration: 10, path: constantPath(0.5, 0.5), window, faces: [face] });
    // The face reaches 0.45 from the centre: 1/(2*0.45) = 1.11x at most.
    expect(zooms).toHaveLength(1);
    expect(zooms[0]!.scale).toBeLessThanOrEqual(0.5 / 0.45 + 1e-3);
    const edge = { t: 1, box: { x: 0.01, y: 0.4, width: 0.2, height: 0.2 } };
    expect(planZooms({ moments: [{ start: 0.5, end: 1.5 }], duration: 10, path: constantPath(0.5, 0.5), window, faces: [edge] })).toHaveLength(0);
  });

  it("renders as before with zoom off: no zoom planned, the square at its plain size throughout", async () => {
    const plainFile = await render({ zoom: "off" }, [], "plain");
    const plain = ((SQUARE * 720) / SIDE) * (OUT / 720);
    for (const t of [1, source.durationSeconds / 2, source.durationSeconds - 1]) {
      expect(Math.abs((await squareWidth(plainFile, t)) / plain - 1)).toBeLessThan(0.03);
    }
  }, 300_000);
});
