import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, type AspectRatio } from "#contract";
import { analyse } from "../../src/analyse/index.ts";
import { outputSize } from "../../src/render/geometry.ts";
import { renderClip } from "../../src/render/index.ts";
import type { Candidate } from "../../src/shared/types.ts";
import type { MediaSpec } from "../../../test/media/generate.ts";
import { generatedSource, type GeneratedSource } from "../helpers/engine-source.ts";
import { brightCentreX, colourDistance, greyFrameAt, greyImage, meanColourOfFrame, rgbOf } from "../helpers/frames.ts";
import { ffprobeJson, nativeRunner, tempDir } from "../helpers/media.ts";
import { ffmpegChildren } from "../helpers/processes.ts";

const runner = nativeRunner();
/** Two scenes with the subject far left, then far right; speech throughout. */
const TWO_SIDES: MediaSpec = { durationSeconds: 24, sceneChanges: [12], seed: 21 };

let out: string;
let twoSides: GeneratedSource;

beforeAll(async () => {
  out = await tempDir("render-test");
  twoSides = await generatedSource(runner, TWO_SIDES);
});

async function render(gen: GeneratedSource, candidate: Candidate, config: Partial<ClipConfig>, name: string) {
  const parsed = ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 30, ...config });
  const outPath = path.join(out, `${name}.mp4`);
  const thumbnailPath = path.join(out, `${name}.jpg`);
  const progress: number[] = [];
  const size = await renderClip(runner, {
    source: gen.source,
    candidate,
    config: parsed,
    outPath,
    thumbnailPath,
    signal: new AbortController().signal,
    onProgress: (f) => progress.push(f),
  });
  return { size, outPath, thumbnailPath, progress };
}

function streamOf(probe: Awaited<ReturnType<typeof ffprobeJson>>, type: string) {
  const stream = probe.streams.find((s) => s.codec_type === type);
  expect(stream, `${type} stream`).toBeDefined();
  return stream!;
}

const EXPECTED: [AspectRatio, 720 | 1080, number, number][] = [
  ["9:16", 720, 720, 1280],
  ["1:1", 720, 720, 720],
  ["4:5", 720, 720, 900],
  ["16:9", 720, 1280, 720],
  // The 320x180 source is smaller than 720: `original` keeps its size rather than upscaling.
  ["original", 720, 320, 180],
  ["9:16", 1080, 1080, 1920],
];

describe("renderClip", () => {
  it.each(EXPECTED)("%s at %i: %ix%i H.264/AAC MP4 of the clip's length, JPEG thumbnail of the same size", async (aspect_ratio, resolution, width, height) => {
    const candidate: Candidate = { start: 3, end: 8, score: 0.5, reasons: ["speech_density"] };
    const { size, outPath, thumbnailPath, progress } = await render(twoSides, candidate, { aspect_ratio, resolution }, `${aspect_ratio.replace(":", "x")}-${resolution}`);
    expect(size).toEqual({ width, height });
    const probe = await ffprobeJson(outPath);
    expect(probe.format.format_name).toContain("mp4");
    const video = streamOf(probe, "video");
    expect(video.codec_name).toBe("h264");
    expect([video.width, video.height]).toEqual([width, height]);
    expect(streamOf(probe, "audio").codec_name).toBe("aac");
    expect(Number(probe.format.duration)).toBeGreaterThan(5 - 0.1);
    expect(Number(probe.format.duration)).toBeLessThan(5 + 0.1);
    const thumb = await ffprobeJson(thumbnailPath);
    expect(streamOf(thumb, "video").codec_name).toBe("mjpeg");
    expect([thumb.streams[0]!.width, thumb.streams[0]!.height]).toEqual([width, height]);
    expect((await readFile(thumbnailPath)).subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect(progress[progress.length - 1]).toBe(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThanOrEqual(progress[i - 1]!);
  });

  it("original keeps the source's shape with the resolution as short side when the source is large enough", () => {
    expect(outputSize({ aspect_ratio: "original", resolution: 720 }, { width: 1920, height: 1080 })).toEqual({ width: 1280, height: 720 });
    expect(outputSize({ aspect_ratio: "original", resolution: 1080 }, { width: 1080, height: 1920 })).toEqual({ width: 1080, height: 1920 });
    expect(outputSize({ aspect_ratio: "original", resolution: 720 }, { width: 1440, height: 1080 })).toEqual({ width: 960, height: 720 });
  });

  it("cuts are frame-exact: a clip between two scene changes holds only that scene", async () => {
    const gen = await generatedSource(runner, { durationSeconds: 20, sceneChanges: [6, 13.2], subject: false, keyframesAtSceneChanges: false, seed: 22 });
    const [cutA, cutB] = gen.facts.sceneChanges as [number, number];
    const candidate: Candidate = { start: cutA, end: cutB, score: 0.5, reasons: ["scene_change"] };
    const { outPath } = await render(gen, candidate, { aspect_ratio: "16:9", resolution: 720 }, "exact");
    const frames = Math.round((cutB - cutA) * gen.facts.fps);
    const sceneColour = rgbOf(gen.facts.scenes[1]!.color);
    expect(colourDistance(await meanColourOfFrame(outPath, 0), sceneColour)).toBeLessThan(16);
    expect(colourDistance(await meanColourOfFrame(outPath, frames - 1), sceneColour)).toBeLessThan(16);
    const probe = await ffprobeJson(outPath);
    expect(Number(probe.format.duration)).toBeCloseTo((cutB - cutA), 1);
  });

  it("reframe=auto keeps the planted subject in the middle of the frame, scene by scene", async () => {
    const config = ClipConfig.parse({ min_clip_seconds: 20, max_clip_seconds: 24, reframe: "auto", aspect_ratio: "9:16", resolution: 720 });
    const [candidate] = await analyse(runner, twoSides.source, "lecture", config, { signal: new AbortController().signal, onProgress: () => {} });
    expect(candidate!.crop?.length).toBe(2);
    const { outPath, thumbnailPath } = await render(twoSides, candidate!, config, "auto");
    const thumbCentre = brightCentreX(await greyImage(thumbnailPath, 72, 128), 72);
    expect(Math.abs((thumbCentre ?? 0) - 0.5), "subject in the thumbnail").toBeLessThan(0.15);
    const [first, second] = twoSides.facts.scenes as [typeof twoSides.facts.scenes[0], typeof twoSides.facts.scenes[0]];
    for (const scene of [first, second]) {
      const at = (scene.start + scene.end) / 2 - candidate!.start;
      const centre = brightCentreX(await greyFrameAt(outPath, at, 72, 128), 72);
      expect(centre, `subject visible at ${at}`).not.toBeNull();
      expect(Math.abs(centre! - 0.5)).toBeLessThan(0.15);
    }
    // The centred crop of the same moment does not contain the subject at all: the test would catch a crop that ignored the plan.
    const firstMiddle = (first.start + first.end) / 2;
    const { outPath: centred } = await render(
      twoSides,
      { ...candidate!, start: firstMiddle - 1, end: firstMiddle + 1, crop: undefined },
      { ...config, reframe: "center" },
      "centred",
    );
    expect(brightCentreX(await greyFrameAt(centred, 1, 72, 128), 72)).toBeNull();
  });

  it("a source without audio still gets an AAC track (silent)", async () => {
    const gen = await generatedSource(runner, { durationSeconds: 12, audio: "none", seed: 23 });
    const { outPath } = await render(gen, { start: 2, end: 8, score: 0.4, reasons: ["motion_burst"] }, { aspect_ratio: "1:1", resolution: 720 }, "silent");
    const probe = await ffprobeJson(outPath);
    expect(streamOf(probe, "video").codec_name).toBe("h264");
    expect(streamOf(probe, "audio").codec_name).toBe("aac");
    expect(Number(probe.format.duration)).toBeCloseTo(6, 1);
  });

  it("an aborted render rejects and leaves no ffmpeg running", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const rendering = renderClip(runner, {
      source: twoSides.source,
      candidate: { start: 0, end: 24, score: 0.5, reasons: ["speech_density"] },
      config: ClipConfig.parse({ resolution: 1080 }),
      outPath: path.join(out, "aborted.mp4"),
      thumbnailPath: path.join(out, "aborted.jpg"),
      signal: controller.signal,
      onProgress: (f) => {
        if (f > 0.05) controller.abort(new Error("canceled by test"));
      },
    });
    await expect(rendering).rejects.toThrow("canceled by test");
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await ffmpegChildren()).toEqual([]);
  });
});
