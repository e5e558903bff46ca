/**
 * The speech model on two threads: once the PCM is finished (the
 * analysis pass that writes it has ended), the lanes left are stepped on both
 * of the model's threads at once. The probabilities are the same, bit for
 * bit, as on one thread; while the PCM still grows, only the first thread
 * steps, so the pass keeps the other core.
 */
import { execFile } from "node:child_process";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cachedSpeechSource } from "../../../test/media/speech.ts";
import { loadSpeechModel, SPEECH_THREADS, type SpeechModel } from "../../src/analyse/speech-model.ts";
import { LANE_FRAMES, FRAME_SECONDS, shareOut, speechProbabilities } from "../../src/analyse/vad.ts";
import { GrowingFile } from "../../src/source/growing-file.ts";
import { FFMPEG, removeTempDirs, tempDir } from "../helpers/media.ts";

const run = promisify(execFile);
const MULTICORE = availableParallelism() > 1;

interface Call {
  thread: number;
  /** Whether the PCM was finished when the step was asked for. */
  finished: boolean;
  /** Steps in flight, this one included, when it was asked for. */
  inFlight: number;
}

/** The model, with every step recorded; `threads: 1` runs everything on thread 0, as a one-thread model does. */
function recorded(model: SpeechModel, opts: { threads?: number; growing?: GrowingFile; onCall?: (count: number) => void } = {}) {
  const calls: Call[] = [];
  let inFlight = 0;
  const wrapped: SpeechModel = {
    name: model.name,
    threads: opts.threads ?? model.threads,
    initialState: (batch) => model.initialState(batch),
    async step(input, state, batch, thread = 0) {
      inFlight += 1;
      calls.push({ thread, finished: opts.growing?.finished ?? true, inFlight });
      opts.onCall?.(calls.length);
      try {
        return await model.step(input, state, batch, opts.threads === 1 ? 0 : thread);
      } finally {
        inFlight -= 1;
      }
    },
  };
  return { model: wrapped, calls };
}

let model: SpeechModel;
let pcm: string;
let dir: string;

beforeAll(async () => {
  const loaded = await loadSpeechModel();
  if (!("model" in loaded)) throw new Error(`the speech model must load on this machine: ${loaded.unavailable}`);
  model = loaded.model;
  dir = await tempDir("vad-threads");
  // About 50 s of two voices taking turns: four lanes of LANE_FRAMES frames.
  const made = await cachedSpeechSource({
    sentences: [
      "Welcome back to the show where we talk about rivers and lakes.",
      "Today my guest has spent twenty years walking along old rivers.",
      "Most people think of a single spring high up in the mountains.",
      "In fact a river is fed by thousands of small streams and bogs.",
      "The water table rises and falls with every season of the year.",
      "Floods come quickly in the spring when the snow starts to melt.",
      "Farmers have used the water of rivers for thousands of years.",
      "They dug canals and ditches to bring water to their fields.",
      "Some of those canals are still in use in many places today.",
      "Thank you for listening and we will see you again next week.",
    ],
    seed: 30,
  });
  pcm = join(dir, "speech.s16");
  await run(FFMPEG, ["-nostdin", "-loglevel", "error", "-y", "-i", made.path, "-map", "0:a:0", "-ac", "1", "-ar", "16000", "-f", "s16le", pcm]);
}, 120_000);

afterAll(removeTempDirs);

describe("the speech model's threads", () => {
  it("has one thread per core, two at most, each lowered in priority", () => {
    expect(model.threads).toBe(SPEECH_THREADS);
    expect(SPEECH_THREADS).toBe(Math.min(2, availableParallelism()));
    expect(model.threadPriorities).toHaveLength(model.threads);
  });

  it.runIf(MULTICORE)("a finished PCM: the lanes run on both threads at once, with the probabilities of one thread bit for bit", async () => {
    const lanes = Math.ceil((await readFile(pcm)).length / 2 / 512 / LANE_FRAMES);
    expect(lanes).toBeGreaterThanOrEqual(3);
    const one = recorded(model, { threads: 1 });
    const two = recorded(model);
    const alone = await speechProbabilities(one.model, pcm);
    const shared = await speechProbabilities(two.model, pcm);
    expect(shared.length).toBe(alone.length);
    expect(Buffer.from(shared.buffer, shared.byteOffset, shared.byteLength).equals(Buffer.from(alone.buffer, alone.byteOffset, alone.byteLength))).toBe(true);
    expect(new Set(one.calls.map((c) => c.thread))).toEqual(new Set([0]));
    expect(new Set(two.calls.map((c) => c.thread))).toEqual(new Set([0, 1]));
    expect(Math.max(...two.calls.map((c) => c.inFlight))).toBe(2);
    // Each thread steps a batch of its own: more, smaller steps.
    expect(two.calls.length).toBeGreaterThan(one.calls.length);
  });

  it.runIf(MULTICORE)("a growing PCM: one thread while it grows, both once it is finished, and the same probabilities", async () => {
    const bytes = await readFile(pcm);
    const path = join(dir, "growing.s16");
    // A whole number of samples, about 60% of the audio, written before the model starts.
    const head = Math.floor((bytes.length * 0.6) / 2) * 2;
    await writeFile(path, bytes.subarray(0, head));
    const growing = new GrowingFile(path);
    let stepped!: () => void;
    const tenSteps = new Promise<void>((resolve) => (stepped = resolve));
    const two = recorded(model, { growing, onCall: (count) => count >= 10 && stepped() });
    const probabilities = speechProbabilities(two.model, growing);
    growing.grew();
    await tenSteps;
    await appendFile(path, bytes.subarray(head));
    growing.finish();
    const result = await probabilities;
    const whole = await speechProbabilities(recorded(model, { threads: 1 }).model, pcm);
    expect(Buffer.from(result.buffer, result.byteOffset, result.byteLength).equals(Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength))).toBe(true);
    const growingCalls = two.calls.filter((c) => !c.finished);
    expect(growingCalls.length).toBeGreaterThanOrEqual(10);
    expect(growingCalls.every((c) => c.thread === 0 && c.inFlight === 1)).toBe(true);
    expect(two.calls.some((c) => c.finished && c.thread === 1)).toBe(true);
    expect(result.length * FRAME_SECONDS).toBeGreaterThan(40);
  });
});

describe("shareOut", () => {
  it("splits lanes into groups of about equal steps, the longest first", () => {
    const lanes = [64, 10, 64, 30, 64, 5].map((chunkFrames, id) => ({ id, chunkFrames }));
    const groups = shareOut(lanes, 2);
    expect(groups).toHaveLength(2);
    const steps = groups.map((group) => group.reduce((sum, lane) => sum + lane.chunkFrames, 0));
    expect(steps[0]! + steps[1]!).toBe(237);
    expect(Math.abs(steps[0]! - steps[1]!)).toBeLessThanOrEqual(64);
    expect(groups.flat().map((lane) => lane.id).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("never makes more groups than lanes", () => {
    expect(shareOut([{ chunkFrames: 3 }], 2)).toEqual([[{ chunkFrames: 3 }]]);
  });
});
