/**
 * `npm run bench:transcribe`: the wall time of the transcript's Workers AI
 * stage, one chunk at a time (K = 1) against TRANSCRIBE_CONCURRENCY
 * chunks in flight, side by side in one run, on the speech source of
 * `bench:speech` (6.4 minutes, 282 s of it espeak-ng speech over music, in
 * 14 chunks; cached in .tmp/bench).
 *
 * The stage is the engine's own (transcribeWithWorkersAi: real ffmpeg
 * extractions, the real reporter over HTTP); only the Worker is the tests'
 * fake, answering every chunk after BENCH_TRANSCRIBE_ANSWER_MS (default
 * 1500 ms) with the words spoken in it. The assumption: a call of
 * whisper-large-v3-turbo on 30 s of audio through the Worker takes about
 * 1.5 s; the model's real time varies, and the Worker's retries only add to
 * it. The speech spans given to the stage are the source's sentences (what
 * the analysis's speech model finds), so chunks skip silences as in a job.
 *
 * BENCH_TRANSCRIBE_ROUNDS (default 2) rounds, alternating which mode goes
 * first; each mode's median round is printed with its CPU (this process: the
 * reporter and the fake Worker; its ffmpeg children: the extractions). The
 * chunks' extraction alone is timed too: the stage before this change
 * extracted each chunk only after the previous one was answered, so it took
 * about K = 1's time plus the extraction of every chunk after the first.
 * Writes bench/results/transcribe-<time>.json.
 */
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { probeSource } from "../../container/src/source/probe.ts";
import { JobReporter } from "../../container/src/channel/report.ts";
import { wordsFromCues } from "../../container/src/transcript/build.ts";
import { chunkArgs, planChunks } from "../../container/src/transcript/chunk-plan.ts";
import { TRANSCRIBE_CONCURRENCY, transcribeWithWorkersAi } from "../../container/src/transcript/workers-ai.ts";
import type { SourceInfo } from "../../container/src/shared/types.ts";
import { startFakeWorker } from "../../container/test/helpers/fake-worker.ts";
import { nativeRunner } from "../../container/test/helpers/media.ts";
import { PROJECT_ROOT } from "../../scripts/local-stack/paths.ts";
import { exitedChildrenCpuSeconds } from "./cpu.ts";
import { benchSpeechSource } from "./speech-source.ts";

const ANSWER_MS = Number(process.env.BENCH_TRANSCRIBE_ANSWER_MS ?? 1500);
const ROUNDS = Math.max(1, Number(process.env.BENCH_TRANSCRIBE_ROUNDS ?? 2));

interface Figures {
  lanes: number;
  wall_seconds: number;
  /** This process (reporter, fake Worker) plus its exited children (the ffmpeg extractions). */
  cpu_seconds: number;
  ffmpeg_cpu_seconds: number;
  most_open: number;
}

function round(value: number, digits = 2): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  console.log("bench:transcribe: preparing the speech source (generated once, cached in .tmp/bench)...");
  const made = await benchSpeechSource();
  const work = path.join(PROJECT_ROOT, ".tmp", "bench", "transcribe-run");
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const runner = nativeRunner();
  const source: SourceInfo = await probeSource({
    runner,
    path: made.path,
    sizeBytes: (await stat(made.path)).size,
    videoUrl: "https://bench.test/speech.mp4",
    platformTitle: null,
    maxSourceSeconds: 3 * 3600,
    signal: new AbortController().signal,
  });
  const speech = made.sentences.map((s) => ({ start: s.start, end: s.end }));
  const chunks = planChunks(source.durationSeconds, speech);
  const words = wordsFromCues(made.sentences.map((s) => ({ start: s.start, end: s.end, text: s.text })), source.durationSeconds);

  const tokens = new Map<string, string>();
  const worker = await startFakeWorker(tokens, work);
  worker.behaviour.transcribe = async ({ startSeconds, wav }) => {
    const seconds = (wav.length - 44) / 32000;
    await new Promise((resolve) => setTimeout(resolve, ANSWER_MS));
    return { status: 200, body: { language: "en", words: words.filter((w) => w.end > startSeconds && w.start < startSeconds + seconds) } };
  };

  let runs = 0;
  const measure = async (lanes: number): Promise<Figures> => {
    runs += 1;
    const jobId = `job_bench_transcribe_${runs}`;
    const token = `token-${jobId}-abcdefghijkl`;
    tokens.set(jobId, token);
    const reporter = new JobReporter({ callbackBase: worker.base, jobId, token, attempts: 5, retryBaseMs: 500, timeoutMs: 30_000, onInactive: () => undefined });
    worker.resetTranscribeMostOpen();
    const cpuBefore = process.cpuUsage();
    const childrenBefore = exitedChildrenCpuSeconds();
    const started = performance.now();
    const outcome = await transcribeWithWorkersAi({
      runner,
      reporter,
      source,
      speech,
      chunkPath: (i) => path.join(work, `${jobId}-speech-${i}.wav`),
      signal: new AbortController().signal,
      onProgress: () => undefined,
      concurrency: lanes,
    });
    const wall = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const ffmpegCpu = exitedChildrenCpuSeconds() - childrenBefore;
    if (outcome.kind !== "ok" || outcome.words.length === 0) throw new Error(`the stage did not give words: ${JSON.stringify(outcome)}`);
    return { lanes, wall_seconds: wall, cpu_seconds: (cpu.user + cpu.system) / 1e6 + ffmpegCpu, ffmpeg_cpu_seconds: ffmpegCpu, most_open: worker.transcribeMostOpen };
  };

  /** The chunks' extractions alone, one after the other (what a stage without overlap adds between calls). */
  const extractionsAlone = async (): Promise<number> => {
    const started = performance.now();
    for (const [index, chunk] of chunks.entries()) {
      const wav = path.join(work, `extract-only-${index}.wav`);
      const result = await runner.ffmpeg({ args: chunkArgs(source, chunk, wav), inputs: [source.path], outputs: [wav], timeoutMs: 60_000 });
      if (result.exitCode !== 0) throw new Error(`extraction ${index} failed: ${result.stderrTail}`);
      await rm(wav, { force: true });
    }
    return (performance.now() - started) / 1000;
  };

  const loadBefore = os.loadavg()[0] ?? 0;
  const rounds: { sequential: Figures; concurrent: Figures; extraction_seconds: number }[] = [];
  try {
    for (let r = 0; r < ROUNDS; r += 1) {
      // Alternate which goes first, so a change of load during the run falls on both.
      const first = r % 2 === 0 ? 1 : TRANSCRIBE_CONCURRENCY;
      const a = await measure(first);
      const b = await measure(first === 1 ? TRANSCRIBE_CONCURRENCY : 1);
      const extraction = await extractionsAlone();
      const [sequential, concurrent] = first === 1 ? [a, b] : [b, a];
      rounds.push({ sequential, concurrent, extraction_seconds: extraction });
      console.log(
        `round ${r + 1}: K=1 ${round(sequential.wall_seconds)} s, K=${TRANSCRIBE_CONCURRENCY} ${round(concurrent.wall_seconds)} s ` +
          `(ratio ${round(concurrent.wall_seconds / sequential.wall_seconds)}), extractions alone ${round(extraction)} s`,
      );
    }
  } finally {
    await worker.close();
    await rm(work, { recursive: true, force: true });
  }
  const loadAfter = os.loadavg()[0] ?? 0;

  const pick = (mode: "sequential" | "concurrent") => {
    const wall = median(rounds.map((r) => r[mode].wall_seconds));
    const cpu = median(rounds.map((r) => r[mode].cpu_seconds));
    const ffmpeg = median(rounds.map((r) => r[mode].ffmpeg_cpu_seconds));
    const mostOpen = Math.max(...rounds.map((r) => r[mode].most_open));
    return { wall_seconds: round(wall), cpu_seconds: round(cpu), ffmpeg_cpu_seconds: round(ffmpeg), most_open: mostOpen };
  };
  const sequential = pick("sequential");
  const concurrent = pick("concurrent");
  const extraction = median(rounds.map((r) => r.extraction_seconds));
  const perChunkExtraction = extraction / chunks.length;
  const result = {
    source_seconds: round(source.durationSeconds, 1),
    speech_seconds: round(speech.reduce((sum, s) => sum + s.end - s.start, 0), 1),
    chunks: chunks.length,
    answer_ms: ANSWER_MS,
    lanes: TRANSCRIBE_CONCURRENCY,
    rounds: ROUNDS,
    sequential,
    concurrent,
    ratio: round(concurrent.wall_seconds / sequential.wall_seconds),
    saved_seconds: round(sequential.wall_seconds - concurrent.wall_seconds),
    extraction_alone_seconds: round(extraction),
    // A stage without overlap (extract, ask, wait, next): K = 1 plus every extraction after the first.
    sequential_estimate_seconds: round(sequential.wall_seconds + extraction - perChunkExtraction),
    ideal_concurrent_seconds: round(Math.ceil(chunks.length / TRANSCRIBE_CONCURRENCY) * (ANSWER_MS / 1000) + perChunkExtraction),
    cpus: os.cpus().length,
    load_average_1m: { start: round(loadBefore), end: round(loadAfter) },
    every_round: rounds.map((r) => ({ sequential: round(r.sequential.wall_seconds), concurrent: round(r.concurrent.wall_seconds), extraction: round(r.extraction_seconds) })),
  };
  console.log("");
  console.log(`source: ${result.source_seconds} s, ${result.speech_seconds} s of speech in ${result.chunks} chunks; the fake Worker answers each after ${ANSWER_MS} ms`);
  const row = (label: string, f: typeof sequential) =>
    `${label.padEnd(24)}${`${f.wall_seconds} s`.padEnd(10)}${`${f.cpu_seconds} s (${f.ffmpeg_cpu_seconds} s)`.padEnd(20)}${f.most_open}`;
  console.log(`${"".padEnd(24)}${"wall".padEnd(10)}${"CPU (ffmpeg)".padEnd(20)}most requests open`);
  console.log(row("one at a time (K=1)", sequential));
  console.log(row(`${TRANSCRIBE_CONCURRENCY} in flight (K=${TRANSCRIBE_CONCURRENCY})`, concurrent));
  console.log(`ratio K=${TRANSCRIBE_CONCURRENCY} / K=1: ${result.ratio} (${result.saved_seconds} s sooner); the ideal at K=${TRANSCRIBE_CONCURRENCY}: ${result.ideal_concurrent_seconds} s`);
  console.log(`extractions alone: ${result.extraction_alone_seconds} s; a stage without overlap would take about ${result.sequential_estimate_seconds} s`);
  console.log(`median of ${ROUNDS} rounds; machine: ${result.cpus} cores, 1-minute load ${result.load_average_1m.start} at the start, ${result.load_average_1m.end} at the end`);
  const resultsDir = path.join(PROJECT_ROOT, "bench", "results");
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `transcribe-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  await writeFile(file, JSON.stringify(result, null, 2));
  console.log(`figures written to ${path.relative(PROJECT_ROOT, file)}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
