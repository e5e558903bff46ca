import { existsSync } from "node:fs";
import { readdir, readlink, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobFailure } from "../../src/shared/errors.ts";
import type { FfmpegRunner } from "../../src/ffmpeg/runner.ts";
import { mapRequestFiles } from "../../src/ffmpeg/wasm-paths.ts";
import { createWasmRunner, wasmThreadStats } from "../../src/ffmpeg/wasm.ts";
import { ProcessTimeoutError } from "../../src/shared/spawn.ts";
import { ALLOWED_DEMUXERS } from "../../src/source/probe.ts";
import { ffprobeJson, makeTinyVideo, tempDir } from "../helpers/media.ts";
import { waitFor } from "../helpers/servers.ts";

/** A run that never ends by itself: an endless lavfi source decoded to nowhere. */
const endless = ["-v", "info", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=5", "-f", "null", "-"];

/** How many of this process's file descriptors point at `file`. */
async function descriptorsOpenOn(file: string): Promise<number> {
  const fds = await readdir("/proc/self/fd");
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")));
  return targets.filter((target) => target === file).length;
}

let runner: FfmpegRunner;
let dir: string;
let source: string;

beforeAll(async () => {
  dir = await tempDir("wasm-runner");
  source = path.join(dir, "source.mp4");
  await makeTinyVideo(source, 3);
  runner = await createWasmRunner();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("wasm ffmpeg runner", () => {
  it("encodes a short source into an H.264/AAC MP4 that native ffprobe reads", async () => {
    const out = path.join(dir, "vertical clip.mp4");
    const lines: string[] = [];
    const result = await runner.ffmpeg({
      args: [
        "-nostdin", "-hide_banner", "-protocol_whitelist", "file",
        "-i", source,
        "-vf", "scale=-2:96,crop=96:96",
        "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
        "-c:a", "aac", "-b:a", "64k", "-movflags", "+faststart",
        "-y", out,
      ],
      inputs: [source],
      outputs: [out],
      timeoutMs: 60_000,
      onStderrLine: (line) => lines.push(line),
    });
    expect(result.exitCode, result.stderrTail).toBe(0);
    expect(lines.some((l) => l.startsWith("Output #0"))).toBe(true);
    // Paths inside the core are its own; the caller's file must still be named in the log.
    expect(lines.some((l) => l.includes("vertical clip.mp4"))).toBe(true);
    expect(lines.every((l) => !l.includes("\r") && l !== "Aborted()")).toBe(true);

    const probed = await ffprobeJson(out);
    const video = probed.streams.find((s) => s.codec_type === "video");
    const audio = probed.streams.find((s) => s.codec_type === "audio");
    expect(video).toMatchObject({ codec_name: "h264", width: 96, height: 96 });
    expect(audio?.codec_name).toBe("aac");
    expect(Number(probed.format.duration)).toBeGreaterThan(2.5);
    expect(Number(probed.format.duration)).toBeLessThan(3.5);
  });

  it("answers ffprobe with the JSON and exit codes the probe stage relies on", async () => {
    const detect = await runner.ffprobe({
      args: ["-v", "error", "-protocol_whitelist", "file", "-format_whitelist", ALLOWED_DEMUXERS.join(","), "-show_entries", "format=format_name", "-of", "json", "-i", source],
      inputs: [source],
      outputs: [],
      timeoutMs: 30_000,
    });
    expect(detect.exitCode).toBe(0);
    expect(JSON.parse(detect.stdout)).toEqual({ format: { format_name: "mov,mp4,m4a,3gp,3g2,mj2" } });

    const full = await runner.ffprobe({
      args: ["-v", "error", "-f", "mov", "-show_format", "-show_streams", "-of", "json", "-i", source],
      inputs: [source],
      outputs: [],
      timeoutMs: 30_000,
    });
    const parsed = JSON.parse(full.stdout) as { format: { duration: string }; streams: { codec_type: string; width?: number; height?: number; avg_frame_rate?: string }[] };
    expect(Number(parsed.format.duration)).toBeCloseTo(3, 0);
    expect(parsed.streams.find((s) => s.codec_type === "video")).toMatchObject({ width: 160, height: 90, avg_frame_rate: "10/1" });

    const garbage = path.join(dir, "garbage.mp4");
    await writeFile(garbage, Buffer.alloc(4096, 7));
    const refused = await runner.ffprobe({ args: ["-v", "error", "-show_format", "-of", "json", "-i", garbage], inputs: [garbage], outputs: [], timeoutMs: 30_000 });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderrTail).toMatch(/Invalid data/);
  });

  it("runs two commands at once on separate threads without mixing their files", async () => {
    const sizes = [48, 80];
    const outs = sizes.map((size) => path.join(dir, `square-${size}.mp4`));
    const results = await Promise.all(
      sizes.map((size, i) =>
        runner.ffmpeg({
          args: ["-v", "error", "-i", source, "-t", "1", "-vf", `scale=${size}:${size}`, "-c:v", "libx264", "-preset", "ultrafast", "-an", "-y", outs[i]!],
          inputs: [source],
          outputs: [outs[i]!],
          timeoutMs: 60_000,
        }),
      ),
    );
    expect(results.map((r) => r.exitCode)).toEqual([0, 0]);
    for (const [i, size] of sizes.entries()) {
      const probed = await ffprobeJson(outs[i]!);
      expect(probed.streams[0]).toMatchObject({ codec_name: "h264", width: size, height: size });
    }
  });

  it("reports a failing ffmpeg as a non-zero exit and leaves no output behind", async () => {
    const out = path.join(dir, "never.mp4");
    const result = await runner.ffmpeg({
      args: ["-v", "error", "-i", source, "-c:v", "no_such_encoder", "-y", out],
      inputs: [source],
      outputs: [out],
      timeoutMs: 30_000,
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderrTail).toMatch(/no_such_encoder/);
    expect(existsSync(out)).toBe(false);
  });

  it("stops a long run within seconds of an abort, rejects with the reason and closes the input", async () => {
    const controller = new AbortController();
    let started = false;
    // Loops over the source file for ever, so the thread is reading it when stopped.
    const looping = ["-v", "info", "-stream_loop", "-1", "-i", source, "-f", "null", "-"];
    const run = runner.ffmpeg({ args: looping, inputs: [source], outputs: [], timeoutMs: 120_000, signal: controller.signal, onStderrLine: () => (started = true) });
    const outcome = run.then(() => "resolved", (error: unknown) => error);
    await waitFor(() => started, 30_000, "wasm ffmpeg to start");
    expect(wasmThreadStats().alive).toBeGreaterThan(wasmThreadStats().idle);
    expect(await descriptorsOpenOn(source)).toBe(1);
    const abortedAt = Date.now();
    controller.abort(new Error("cancelled by the test"));
    const error = await outcome;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe("cancelled by the test");
    expect(Date.now() - abortedAt).toBeLessThan(3_000);
    // The busy thread is terminated, not left spinning in the background.
    await waitFor(() => wasmThreadStats().alive === wasmThreadStats().idle, 5_000, "the aborted thread to exit");
    expect(await descriptorsOpenOn(source)).toBe(0);
  });

  it("stops a run past its time limit with ProcessTimeoutError, and runs the next command normally", async () => {
    await expect(runner.ffmpeg({ args: endless, inputs: [], outputs: [], timeoutMs: 1_500 })).rejects.toBeInstanceOf(ProcessTimeoutError);
    await waitFor(() => wasmThreadStats().alive === wasmThreadStats().idle, 5_000, "the timed-out thread to exit");
    const after = await runner.ffprobe({ args: ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", source], inputs: [source], outputs: [], timeoutMs: 30_000 });
    expect(after.stdout.trim().split("\n").sort()).toEqual(["aac", "h264"]);
  });

  it("refuses a source over its size cap with a clear failure", async () => {
    const small = await createWasmRunner({ maxSourceBytes: 10_000 });
    const attempt = small.ffmpeg({ args: ["-i", source, "-f", "null", "-"], inputs: [source], outputs: [], timeoutMs: 30_000 });
    await expect(attempt).rejects.toBeInstanceOf(JobFailure);
    await expect(attempt).rejects.toMatchObject({ code: "source_too_large", message: expect.stringMatching(/WebAssembly.*Install ffmpeg/) });
  });
});

describe("wasm file mapping", () => {
  it("rewrites declared paths (also with a file: prefix), keeping base names", () => {
    const mapped = mapRequestFiles({
      args: ["-i", "/work/a/source.mkv", "-i", "file:/work/a/logo.png", "-y", "/work/b/out.mp4", "-f", "null", "/dev/null"],
      inputs: ["/work/a/source.mkv", "/work/a/logo.png"],
      outputs: ["/work/b/out.mp4"],
    });
    expect(mapped.args).toEqual(["-i", "/io/in0/source.mkv", "-i", "file:/io/in1/logo.png", "-y", "/io/out0/out.mp4", "-f", "null", "/dev/null"]);
    expect(mapped.outputs).toEqual([{ diskPath: "/work/b/out.mp4", memPath: "/io/out0/out.mp4" }]);
  });

  it("refuses an absolute path that is not declared", () => {
    expect(() => mapRequestFiles({ args: ["-i", "/etc/passwd", "-f", "null", "-"], inputs: [], outputs: [] })).toThrow(/not a declared input/);
  });
});
