/**
 * Native vs WebAssembly ffmpeg: time and peak memory of the same commands.
 *
 *   npx tsx bench/ffmpeg-backends.ts [--large-mb 100]
 *
 * Measures
 *   - loading the wasm core: compile in the main thread, first instantiation
 *     in the worker thread (process RSS before and after);
 *   - one 10 s 720x1280 clip render (veryfast, crf 21, AAC) from a 1280x720
 *     source, on each backend;
 *   - with --large-mb N: a source of about N MB through the wasm backend
 *     (audio analysis pass, then a 10 s clip from its middle), the case the
 *     wasm source cap is about.
 * Native memory is the child's peak RSS (sampled from /proc); wasm memory is
 * the whole process's RSS peak minus its RSS before the run, since the core
 * runs in a thread of this process.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { createWasmRunner } from "../container/src/ffmpeg/wasm.ts";

const WORK = path.resolve(".tmp/bench-ffmpeg-backends");
const MB = 1024 * 1024;

function arg(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

function mb(bytes: number): string {
  return `${(bytes / MB).toFixed(0)} MB`;
}

/** Samples this process's RSS until stopped; returns the peak seen. */
function sampleOwnRss(): () => number {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  return () => {
    clearInterval(timer);
    return Math.max(peak, process.memoryUsage().rss);
  };
}

async function childRss(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Runs native ffmpeg, returning wall time and the child's peak RSS (VmHWM, sampled until exit). */
async function runNative(args: string[]): Promise<{ seconds: number; peakBytes: number }> {
  const started = performance.now();
  const child = spawn("ffmpeg", ["-nostdin", "-v", "error", "-y", ...args], { stdio: ["ignore", "ignore", "inherit"] });
  let peak = 0;
  const timer = setInterval(() => {
    if (child.pid) void childRss(child.pid).then((rss) => (peak = Math.max(peak, rss)));
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`native ffmpeg exited ${code}`);
  return { seconds: (performance.now() - started) / 1000, peakBytes: peak };
}

async function generate(out: string, seconds: number, size: string, bitrate: string): Promise<void> {
  if (existsSync(out)) return;
  await runNative([
    "-f", "lavfi", "-i", `testsrc2=size=${size}:rate=30:duration=${seconds},noise=alls=20:allf=t`,
    "-f", "lavfi", "-i", `sine=frequency=300:duration=${seconds}`,
    "-c:v", "libx264", "-preset", "ultrafast", "-b:v", bitrate, "-maxrate", bitrate, "-bufsize", bitrate,
    "-c:a", "aac", "-shortest", out,
  ]);
}

function clipArgs(source: string, start: number, out: string): string[] {
  return [
    "-ss", String(start), "-i", source, "-t", "10",
    "-vf", "crop=ih*9/16:ih,scale=720:1280",
    "-c:v", "libx264", "-preset", "veryfast", "-crf", "21", "-pix_fmt", "yuv420p",
    "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", "-y", out,
  ];
}

async function main(): Promise<void> {
  await mkdir(WORK, { recursive: true });
  const source = path.join(WORK, "source-720p-20s.mp4");
  await generate(source, 20, "1280x720", "2M");

  // Loading the core.
  const before = process.memoryUsage().rss;
  let t = performance.now();
  const wasm = await createWasmRunner({ maxSourceBytes: 2 * 1024 * MB });
  const compiledMs = performance.now() - t;
  const afterCompile = process.memoryUsage().rss;
  t = performance.now();
  const probe = await wasm.ffprobe({ args: ["-v", "error", "-show_format", "-of", "json", source], inputs: [source], outputs: [], timeoutMs: 60_000 });
  if (probe.exitCode !== 0) throw new Error("wasm ffprobe failed");
  const firstRunMs = performance.now() - t;
  const afterFirstRun = process.memoryUsage().rss;
  console.log(`wasm core: compile ${compiledMs.toFixed(0)} ms (+${mb(afterCompile - before)} RSS), first run (thread start + instantiate + ffprobe) ${firstRunMs.toFixed(0)} ms (+${mb(afterFirstRun - afterCompile)} RSS, process ${mb(afterFirstRun)})`);

  // One 10 s vertical clip on each backend.
  const nativeClip = await runNative(clipArgs(source, 5, path.join(WORK, "clip-native.mp4")));
  const wasmOut = path.join(WORK, "clip-wasm.mp4");
  const baseRss = process.memoryUsage().rss;
  const stopSampling = sampleOwnRss();
  t = performance.now();
  const wasmRun = await wasm.ffmpeg({ args: clipArgs(source, 5, wasmOut), inputs: [source], outputs: [wasmOut], timeoutMs: 900_000 });
  const wasmSeconds = (performance.now() - t) / 1000;
  const wasmPeak = stopSampling();
  if (wasmRun.exitCode !== 0) throw new Error(`wasm encode failed: ${wasmRun.stderrTail}`);
  console.log(`10 s 720x1280 clip (source ${mb((await stat(source)).size)}):`);
  console.log(`  native: ${nativeClip.seconds.toFixed(1)} s (${(10 / nativeClip.seconds).toFixed(2)}x realtime), ffmpeg peak RSS ${mb(nativeClip.peakBytes)}`);
  console.log(`  wasm:   ${wasmSeconds.toFixed(1)} s (${(10 / wasmSeconds).toFixed(2)}x realtime), process RSS +${mb(wasmPeak - baseRss)} over ${mb(baseRss)} (peak ${mb(wasmPeak)})`);
  console.log(`  wasm/native time: ${(wasmSeconds / nativeClip.seconds).toFixed(1)}x`);

  const largeMb = Number(arg("--large-mb") ?? 0);
  if (largeMb > 0) {
    const seconds = 60;
    const large = path.join(WORK, `source-${largeMb}mb.mp4`);
    await generate(large, seconds, "1280x720", `${Math.round((largeMb * 8) / seconds)}M`);
    const size = (await stat(large)).size;
    for (const [label, args, outputs] of [
      ["audio analysis (ebur128 + silencedetect)", ["-nostats", "-i", large, "-map", "0:a:0", "-af", "silencedetect=n=-35dB:d=0.3,ebur128=framelog=info", "-f", "null", "-"], []],
      ["10 s clip from the middle", clipArgs(large, seconds / 2, path.join(WORK, "clip-large-wasm.mp4")), [path.join(WORK, "clip-large-wasm.mp4")]],
    ] as const) {
      const rssBefore = process.memoryUsage().rss;
      const stop = sampleOwnRss();
      t = performance.now();
      const run = await wasm.ffmpeg({ args: [...args], inputs: [large], outputs: [...outputs], timeoutMs: 1_800_000 });
      const took = (performance.now() - t) / 1000;
      const peak = stop();
      if (run.exitCode !== 0) throw new Error(`wasm ${label} failed: ${run.stderrTail}`);
      console.log(`wasm, ${mb(size)} source, ${label}: ${took.toFixed(1)} s, process RSS +${mb(peak - rssBefore)} (peak ${mb(peak)})`);
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
