/**
 * The MLT export renders, with Debian's `melt`, to the clip the engine
 * renders: a generated source (ffmpeg's testsrc2: detail everywhere, so a
 * misplaced crop shows) and a clip whose camera pans, then cuts, cropped by
 * the engine's own filter graph (reframe/filter.ts) with ffmpeg. The MLT
 * written for the same clip, rendered by melt, has the clip's frame count and
 * size, and every tenth frame matches the engine's (ffmpeg's ssim filter,
 * above 0.9); a centred crop of the same span does not, so the comparison can
 * tell a wrong crop.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ClipFraming } from "#contract";
import { reframeGraph } from "../../container/src/reframe/filter.ts";
import type { CameraPath } from "../../container/src/reframe/path.ts";
import { writeMlt } from "../../src/jobs/export/mlt.ts";
import { run, sampledSsim, videoOf } from "./video-check.ts";
import { cropKeys, frameRate, keptSpans, toFrames, type ExportTimeline } from "../../src/jobs/export/timeline.ts";
import { cropWindow, framingReport } from "../../container/src/reframe/framing-report.ts";

const SOURCE = { width: 640, height: 360, fps: 30 };
const OUTPUT = { width: 180, height: 320 };
const CLIP = { start: 1, end: 5 };
// A pan from left to right over two seconds, then a cut to a still window left of centre.
const PATH: CameraPath = [
  { from: 0, to: 2, x0: 0.25, x1: 0.75, y0: 0.5, y1: 0.5 },
  { from: 2, to: Number.POSITIVE_INFINITY, x0: 0.3, x1: 0.3, y0: 0.5, y1: 0.5 },
];

async function frameCount(path: string): Promise<number> {
  const video = await videoOf(path);
  expect({ width: video.width, height: video.height }).toEqual(OUTPUT);
  return video.frames;
}

describe("MLT export rendered by melt", () => {
  let dir: string;
  let source: string;
  let engineClip: string;
  let centredClip: string;
  let meltClip: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "clipjobs-mlt-"));
    source = join(dir, "source.mp4");
    await run("ffmpeg", [
      "-v", "error", "-f", "lavfi", "-i", `testsrc2=size=${SOURCE.width}x${SOURCE.height}:rate=${SOURCE.fps}:duration=7`,
      "-f", "lavfi", "-i", "sine=frequency=440:duration=7", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30",
      "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", source,
    ]);
    const render = async (path: CameraPath, out: string) => {
      const graph = `${reframeGraph(OUTPUT, { single: path })}[v]`;
      await run("ffmpeg", [
        "-v", "error", "-ss", String(CLIP.start), "-i", source, "-t", String(CLIP.end - CLIP.start),
        "-filter_complex", graph, "-map", "[v]", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "12", out,
      ]);
    };
    engineClip = join(dir, "engine.mp4");
    centredClip = join(dir, "centred.mp4");
    await render(PATH, engineClip);
    await render([{ from: 0, to: Number.POSITIVE_INFINITY, x0: 0.5, x1: 0.5, y0: 0.5, y1: 0.5 }], centredClip);

    // The clip as the engine reports it, and the export model built from that report.
    const framing: ClipFraming = framingReport({ single: PATH }, SOURCE, OUTPUT, CLIP.end - CLIP.start);
    const rate = frameRate(framing.source_fps);
    const timeline: ExportTimeline = {
      jobId: "job_melt",
      title: "Pan & cut <test>",
      source: { url: source, fileName: "source.mp4", width: SOURCE.width, height: SOURCE.height, durationFrames: toFrames(7, rate) },
      rate,
      transcriptUrl: null,
      clips: [
        {
          index: 0,
          name: "Clip 1",
          url: "https://cdn.example/clip.mp4",
          window: { width: framing.crop_width, height: framing.crop_height },
          output: OUTPUT,
          spans: keptSpans(CLIP.start, CLIP.end, []).map((span) => ({
            sourceIn: toFrames(span.start, rate),
            sourceOut: toFrames(span.end, rate),
            crop: cropKeys(framing, CLIP.start, span, rate),
          })),
          captions: null,
          split: false,
        },
      ],
    };
    const mlt = join(dir, "cut.mlt");
    await writeFile(mlt, writeMlt(timeline));
    meltClip = join(dir, "melt.mp4");
    await run("melt", ["-quiet", mlt, "-consumer", `avformat:${meltClip}`, "vcodec=libx264", "preset=ultrafast", "crf=12", "an=1"]);
    // Three encodes and a melt render: about 40 s on a quiet machine. The limit only bounds a hang, so it leaves
    // room for a machine shared with other work.
  }, 600_000);

  afterAll(async () => {
    if (dir && !process.env.KEEP_EXPORT_DIR) await rm(dir, { recursive: true, force: true });
    else console.log(dir);
  });

  test("the crop window is the render's", () => {
    expect(cropWindow(OUTPUT, SOURCE)).toEqual({ width: 202, height: 360 });
  });

  test("melt's render has the clip's frames and size", async () => {
    const expected = toFrames(CLIP.end - CLIP.start, frameRate(SOURCE.fps));
    expect(await frameCount(engineClip)).toBe(expected);
    expect(await frameCount(meltClip)).toBe(expected);
  });

  test("its picture matches the engine's on every tenth frame, and a centred crop's does not", async () => {
    const matched = await sampledSsim(meltClip, engineClip);
    expect(matched.length).toBe(12);
    for (const ssim of matched) expect(ssim).toBeGreaterThan(0.9);
    const centred = await sampledSsim(meltClip, centredClip);
    expect(Math.min(...centred)).toBeLessThan(0.9);
    console.log(`SSIM melt vs engine: ${matched.map((v) => v.toFixed(3)).join(" ")}; vs centred: ${centred.map((v) => v.toFixed(3)).join(" ")}`);
    expect((await readFile(join(dir, "cut.mlt"), "utf8")).includes("Pan &amp; cut &lt;test&gt;")).toBe(true);
  });
});
