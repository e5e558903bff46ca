/**
 * `npm run bench:speech`: the cost of speech detection, side by side with the
 * audio pass it extends, on a 5-minute source of real speech (espeak-ng, two
 * voices) over a music bed 10 dB below the voice (generated once, cached in
 * .tmp/bench).
 *
 * Three runs, each in a fresh Node process so its peak memory is its own:
 *   audio    today's audio pass (silencedetect + ebur128), as in the fallback;
 *   extract  the same pass also writing mono 16 kHz PCM (the extra output);
 *   speech   that pass, then the speech model over the PCM (the analysis's path).
 *
 * Prints wall time and realtime factor of each part, the detection alone, and
 * the peak RSS of each process (the difference is the memory the model adds);
 * target: detection at least 100x realtime. Writes bench/results/speech-<time>.json.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { audioPass, speechPcmPath } from "../../container/src/analyse/signals.ts";
import { loadSpeechModel } from "../../container/src/analyse/speech-model.ts";
import { detectSpeech } from "../../container/src/analyse/vad.ts";
import { nativeRunner } from "../../container/test/helpers/media.ts";
import { probeSource } from "../../container/src/source/probe.ts";
import { PROJECT_ROOT, TSX_BIN } from "../../scripts/local-stack/paths.ts";
import { benchSpeechSource } from "./speech-source.ts";

const run = promisify(execFile);
const MODES = ["audio", "extract", "speech"] as const;
type Mode = (typeof MODES)[number];

function round(value: number, digits = 1): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

async function benchSource(): Promise<{ path: string; duration: number }> {
  const made = await benchSpeechSource();
  return { path: made.path, duration: made.durationSeconds };
}

interface ChildFigures {
  mode: Mode;
  audio_pass_seconds: number;
  detection_seconds: number;
  /** CPU time of the detection (all of the process's threads): what it costs on an idle core. */
  detection_cpu_seconds: number;
  audio_pass_cpu_seconds: number;
  speech_seconds: number | null;
  peak_rss_mb: number;
}

/** CPU seconds of this process's finished children (cutime + cstime in /proc/self/stat, Linux). */
async function childrenCpuSeconds(): Promise<number> {
  const stat = await readFile("/proc/self/stat", "utf8").catch(() => "");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the name: field 3 is index 0, so cutime (16) and cstime (17) are indices 13 and 14.
  return (Number(fields[13] ?? 0) + Number(fields[14] ?? 0)) / 100;
}

/** One measured run (in a child process). */
async function child(mode: Mode, sourcePath: string): Promise<ChildFigures> {
  const runner = nativeRunner();
  const source = await probeSource({
    runner,
    path: sourcePath,
    sizeBytes: (await stat(sourcePath)).size,
    videoUrl: "https://bench.test/speech.mp4",
    platformTitle: null,
    maxSourceSeconds: 3 * 3600,
    signal: new AbortController().signal,
  });
  const model = mode === "speech" ? await loadSpeechModel() : null;
  if (model && !("model" in model)) throw new Error(`speech model unavailable: ${model.unavailable}`);
  const pcm = speechPcmPath(source);
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const childrenBefore = await childrenCpuSeconds();
  await audioPass(runner, source, { signal: new AbortController().signal, onProgress: () => {}, ...(mode === "audio" ? {} : { speechPcm: pcm }) });
  const audioDone = performance.now();
  const cpuAudio = process.cpuUsage(cpuStart);
  const childrenAfter = await childrenCpuSeconds();
  let speechSeconds: number | null = null;
  if (model && "model" in model) speechSeconds = (await detectSpeech(model.model, pcm, source.durationSeconds)).speechSeconds;
  const detected = performance.now();
  const cpuAll = process.cpuUsage(cpuStart);
  await rm(pcm, { force: true });
  return {
    mode,
    audio_pass_seconds: (audioDone - started) / 1000,
    detection_seconds: (detected - audioDone) / 1000,
    // The audio pass's CPU is mostly its ffmpeg child's: counted from /proc (children reaped by this process).
    audio_pass_cpu_seconds: (cpuAudio.user + cpuAudio.system) / 1e6 + (childrenAfter - childrenBefore),
    detection_cpu_seconds: (cpuAll.user + cpuAll.system - cpuAudio.user - cpuAudio.system) / 1e6,
    speech_seconds: speechSeconds,
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
  };
}

async function main(): Promise<void> {
  const childMode = process.argv.find((a) => a.startsWith("--child="))?.slice("--child=".length) as Mode | undefined;
  if (childMode) {
    const sourcePath = process.argv.at(-1)!;
    console.log(JSON.stringify(await child(childMode, sourcePath)));
    return;
  }
  console.log("bench:speech: preparing the 5-minute speech-over-music source (generated once, cached in .tmp/bench)...");
  const source = await benchSource();
  // The probe writes nothing, but the passes write beside the source: give them their own directory.
  const work = path.join(PROJECT_ROOT, ".tmp", "bench", "speech-run");
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const copy = path.join(work, "source.mp4");
  await run("cp", [source.path, copy]);
  const figures: ChildFigures[] = [];
  for (const mode of MODES) {
    const { stdout } = await run(TSX_BIN, [fileURLToPath(import.meta.url), `--child=${mode}`, copy], { cwd: PROJECT_ROOT, maxBuffer: 1 << 20 });
    figures.push(JSON.parse(stdout.trim().split("\n").at(-1)!) as ChildFigures);
  }
  await rm(work, { recursive: true, force: true });
  const by = (mode: Mode) => figures.find((f) => f.mode === mode)!;
  const rtf = (seconds: number) => round(source.duration / Math.max(seconds, 1e-6));
  const result = {
    source_seconds: round(source.duration),
    audio_pass: {
      seconds: round(by("audio").audio_pass_seconds, 2),
      realtime: rtf(by("audio").audio_pass_seconds),
      cpu_seconds: round(by("audio").audio_pass_cpu_seconds, 2),
      realtime_per_cpu_second: rtf(by("audio").audio_pass_cpu_seconds),
      peak_rss_mb: round(by("audio").peak_rss_mb),
    },
    audio_pass_with_pcm: { seconds: round(by("extract").audio_pass_seconds, 2), realtime: rtf(by("extract").audio_pass_seconds), peak_rss_mb: round(by("extract").peak_rss_mb) },
    detection: {
      seconds: round(by("speech").detection_seconds, 2),
      realtime: rtf(by("speech").detection_seconds),
      cpu_seconds: round(by("speech").detection_cpu_seconds, 2),
      realtime_per_cpu_second: rtf(by("speech").detection_cpu_seconds),
      speech_found_seconds: round(by("speech").speech_seconds ?? 0),
    },
    audio_with_detection: {
      seconds: round(by("speech").audio_pass_seconds + by("speech").detection_seconds, 2),
      realtime: rtf(by("speech").audio_pass_seconds + by("speech").detection_seconds),
      peak_rss_mb: round(by("speech").peak_rss_mb),
    },
    memory_added_mb: round(by("speech").peak_rss_mb - by("audio").peak_rss_mb),
    cpus: os.cpus().length,
    load_average_1m: round(os.loadavg()[0] ?? 0, 2),
    targets: { detection_realtime_min: 100 },
  };
  console.log(`source: ${result.source_seconds} s of speech over music`);
  console.log(`audio pass (today):               ${result.audio_pass.seconds} s  ${result.audio_pass.realtime}x realtime  peak RSS ${result.audio_pass.peak_rss_mb} MB`);
  console.log(`  CPU time of the audio pass:     ${result.audio_pass.cpu_seconds} s  ${result.audio_pass.realtime_per_cpu_second}x realtime per CPU second`);
  console.log(`audio pass + 16 kHz PCM output:   ${result.audio_pass_with_pcm.seconds} s  ${result.audio_pass_with_pcm.realtime}x realtime`);
  console.log(`speech detection alone:           ${result.detection.seconds} s  ${result.detection.realtime}x realtime  (target >= 100x)`);
  console.log(`  CPU time of the detection:      ${result.detection.cpu_seconds} s  ${result.detection.realtime_per_cpu_second}x realtime per CPU second (what an idle core gives)`);
  console.log(`audio pass + detection:           ${result.audio_with_detection.seconds} s  ${result.audio_with_detection.realtime}x realtime  peak RSS ${result.audio_with_detection.peak_rss_mb} MB`);
  console.log(`memory added by detection:        ${result.memory_added_mb} MB (peak RSS, process with the model minus without)`);
  console.log(`machine: ${result.cpus} cores, 1-minute load average ${result.load_average_1m}`);
  const resultsDir = path.join(PROJECT_ROOT, "bench", "results");
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `speech-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  await writeFile(file, JSON.stringify(result, null, 2));
  console.log(`figures written to ${path.relative(PROJECT_ROOT, file)}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
