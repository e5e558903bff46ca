import { describe, expect, it } from "vitest";
import { ProcessTimeoutError } from "../../src/shared/spawn.ts";
import { nativeRunner } from "../helpers/media.ts";
import { waitFor } from "../helpers/servers.ts";
import { ffmpegChildren } from "../helpers/processes.ts";

const runner = nativeRunner();
/** An ffmpeg run that would take far longer than any test: realtime-paced null output. */
const endless = ["-v", "info", "-re", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=5", "-f", "null", "-"];

describe("native ffmpeg runner", () => {
  it("returns the exit code, stdout and a bounded stderr tail, and hands over stderr lines", async () => {
    const lines: string[] = [];
    const ok = await runner.ffmpeg({
      args: ["-v", "info", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=5:duration=1", "-f", "null", "-"],
      inputs: [],
      outputs: [],
      timeoutMs: 30_000,
      onStderrLine: (line) => lines.push(line),
    });
    expect(ok.exitCode).toBe(0);
    expect(lines.some((l) => l.includes("Output #0"))).toBe(true);
    expect(ok.stderrTail.length).toBeLessThanOrEqual(8 * 1024);
    const bad = await runner.ffmpeg({ args: ["-v", "error", "-i", "/nonexistent/file.mp4", "-f", "null", "-"], inputs: [], outputs: [], timeoutMs: 30_000 });
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderrTail).toMatch(/No such file/);
    const probe = await runner.ffprobe({ args: ["-v", "error", "-f", "lavfi", "-show_entries", "stream=width", "-of", "csv=p=0", "testsrc=size=64x48"], inputs: [], outputs: [], timeoutMs: 30_000 });
    expect(probe.stdout.trim()).toBe("64");
  });

  it("kills ffmpeg on abort and rejects with the abort reason", async () => {
    const controller = new AbortController();
    let started = false;
    const run = runner.ffmpeg({ args: endless, inputs: [], outputs: [], timeoutMs: 60_000, signal: controller.signal, onStderrLine: () => (started = true) });
    await waitFor(() => started, 10_000, "ffmpeg output");
    expect((await ffmpegChildren()).length).toBeGreaterThan(0);
    controller.abort(new Error("stop now"));
    await expect(run).rejects.toThrow("stop now");
    await waitFor(async () => (await ffmpegChildren()).length === 0, 10_000, "ffmpeg to exit");
  });

  it("kills ffmpeg past its time limit", async () => {
    await expect(runner.ffmpeg({ args: endless, inputs: [], outputs: [], timeoutMs: 500 })).rejects.toBeInstanceOf(ProcessTimeoutError);
    await waitFor(async () => (await ffmpegChildren()).length === 0, 10_000, "ffmpeg to exit");
  });
});
