import { execFileSync } from "node:child_process";
import { open, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pinnedDemuxer, probeSource, type ProbeRequest } from "../../src/source/probe.ts";
import { makeTinyVideo, nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { failureOf } from "../helpers/failure.ts";
import { startRecordingServer, type RecordingServer } from "../helpers/servers.ts";

const runner = nativeRunner();
let dir: string;
let mp4: string;
let mkv: string;
let loopback: RecordingServer;

beforeAll(async () => {
  dir = await osTempDir("probe");
  mp4 = path.join(dir, "tagged.mp4");
  mkv = path.join(dir, "plain.mkv");
  await makeTinyVideo(mp4, 3, ["-metadata", "title=Planted Title"]);
  await makeTinyVideo(mkv, 2);
  loopback = await startRecordingServer((_req, res) => res.end("segment"));
});
afterAll(async () => {
  await loopback.close();
});

function probeRequest(file: string, overrides: Partial<ProbeRequest> = {}): ProbeRequest {
  return {
    runner,
    path: file,
    sizeBytes: 1,
    videoUrl: "https://cdn.example.com/media/My_Holiday%20Film.mp4?sig=1",
    platformTitle: null,
    maxSourceSeconds: 3600,
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe("probeSource", () => {
  it("reads duration, size, format and the container's title tag", async () => {
    const info = await probeSource(probeRequest(mp4));
    expect(info.durationSeconds).toBeGreaterThan(2.5);
    expect(info.durationSeconds).toBeLessThan(3.5);
    expect(info.width).toBe(160);
    expect(info.height).toBe(90);
    expect(info.fps).toBe(10);
    expect(info.hasAudio).toBe(true);
    expect(info.title).toBe("Planted Title");
    expect(pinnedDemuxer(info.format)).toBe("mov");
  });

  it("falls back to the URL's file name for the title; the platform title wins over both", async () => {
    const fromUrl = await probeSource(probeRequest(mkv));
    expect(fromUrl.format).toBe("matroska,webm");
    expect(fromUrl.title).toBe("My Holiday Film");
    const fromPlatform = await probeSource(probeRequest(mp4, { platformTitle: "Platform Title" }));
    expect(fromPlatform.title).toBe("Platform Title");
  });

  it("refuses a source over the duration limit with source_too_long", async () => {
    const failure = await failureOf(probeSource(probeRequest(mp4, { maxSourceSeconds: 2 })));
    expect(failure.code).toBe("source_too_long");
    expect(failure.message).toMatch(/3 s long; the limit is 2 s/);
  });

  it("refuses a picture larger than 8K with source_too_large, before any decode", async () => {
    // Wide but cheap: 8448x64 has few pixels, yet one side is over the limit.
    const wide = path.join(dir, "wide.mp4");
    await makeTinyVideo(wide, 1, ["-vf", "scale=8448:64"]);
    const failure = await failureOf(probeSource(probeRequest(wide)));
    expect(failure.code).toBe("source_too_large");
    expect(failure.message).toMatch(/8448x64/);
  });

  it("refuses HTML and audio-only files with source_not_video", async () => {
    const html = path.join(dir, "page.mp4");
    await writeFile(html, "<!doctype html><html><head><title>x</title></head><body>not a video</body></html>");
    expect((await failureOf(probeSource(probeRequest(html)))).code).toBe("source_not_video");
    const audio = path.join(dir, "audio.m4a");
    execFileSync("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", audio]);
    const failure = await failureOf(probeSource(probeRequest(audio)));
    expect(failure.code).toBe("source_not_video");
    expect(failure.message).toMatch(/no video stream/);
  });

  it("refuses an HLS playlist disguised as .mp4 without opening the files it names", async () => {
    // The playlist names a FIFO and a loopback URL. Opening the FIFO for writing
    // blocks until some reader opens it, so the pending open below proves whether
    // ffprobe ever tried to read that local file.
    const fifo = path.join(dir, "segment.ts");
    execFileSync("mkfifo", [fifo]);
    let fifoOpenedByReader = false;
    const writerOpen = open(fifo, "w").then((handle) => {
      fifoOpenedByReader = true;
      return handle;
    });
    const playlist = path.join(dir, "playlist.mp4");
    await writeFile(
      playlist,
      ["#EXTM3U", "#EXT-X-TARGETDURATION:2", "#EXTINF:2,", fifo, "#EXTINF:2,", loopback.url("/seg.ts"), "#EXT-X-ENDLIST", ""].join("\n"),
    );
    const failure = await failureOf(probeSource(probeRequest(playlist)));
    expect(failure.code).toBe("source_not_video");
    expect(fifoOpenedByReader).toBe(false);
    expect(loopback.connections).toBe(0);
    // Release the pending writer open by opening the FIFO ourselves.
    const reader = await open(fifo, "r");
    await (await writerOpen).close();
    await reader.close();
    expect((await stat(playlist)).size).toBeGreaterThan(0);
  });

  it("refuses a concat list and an image with source_not_video", async () => {
    const concat = path.join(dir, "list.mp4");
    await writeFile(concat, `ffconcat version 1.0\nfile '${mp4}'\n`);
    expect((await failureOf(probeSource(probeRequest(concat)))).code).toBe("source_not_video");
    const png = path.join(dir, "frame.mp4");
    execFileSync("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x64", "-frames:v", "1", "-f", "image2", "-c:v", "png", png]);
    expect((await failureOf(probeSource(probeRequest(png)))).code).toBe("source_not_video");
  });
});

afterAll(removeTempDirs);
