/**
 * The speech model loader's fallback: when the native runtime cannot be
 * imported (no binary for the platform), it reports why instead of throwing,
 * and the analysis runs on loudness. And the model's thread: scheduled below
 * the engine's other threads where Linux allows it, as before where not.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";

const LINUX = process.platform === "linux";

/** A thread's nice value and CPU seconds as the kernel counts them (/proc/<pid>/task/<tid>/stat, fields 14, 15, 19). */
function threadStat(tid: number): { nice: number; cpuSeconds: number } {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { nice: Number(fields[16]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 };
}

afterEach(() => {
  vi.doUnmock("onnxruntime-node");
  vi.resetModules();
});

describe("loadSpeechModel", () => {
  it("loads the packaged model on this machine", async () => {
    const { loadSpeechModel } = await import("../../src/analyse/speech-model.ts");
    const loaded = await loadSpeechModel();
    expect("model" in loaded && loaded.model.name).toBe("silero-vad-v5");
  });

  it("reports the runtime as unavailable when its native binary cannot load", async () => {
    vi.resetModules();
    vi.doMock("onnxruntime-node", () => {
      throw new Error("onnxruntime_binding.node: cannot open shared object file");
    });
    const { loadSpeechModel } = await import("../../src/analyse/speech-model.ts");
    const loaded = await loadSpeechModel();
    expect(loaded).toEqual({ unavailable: expect.stringMatching(/^the native ONNX runtime did not load: ./) });
    // Cached: a failed load is not retried on every job.
    expect(await loadSpeechModel()).toBe(loaded);
  });

  it.runIf(LINUX)("runs the model on a thread of lower priority than the rest of the engine, and its steps run there", async () => {
    const { loadSpeechModel, SPEECH_THREAD_NICENESS, CONTEXT_SAMPLES, FRAME_SAMPLES } = await import("../../src/analyse/speech-model.ts");
    const ownNice = getPriority();
    const loaded = await loadSpeechModel();
    if (!("model" in loaded)) throw new Error(loaded.unavailable);
    const priority = loaded.model.threadPriorities?.[0];
    expect(priority).toEqual({ tid: expect.any(Number), nice: Math.min(19, ownNice + SPEECH_THREAD_NICENESS) });
    // Every thread of the model is lowered alike (vad.ts steps on all of them once the analysis pass has ended).
    expect(loaded.model.threadPriorities).toHaveLength(loaded.model.threads);
    for (const each of loaded.model.threadPriorities ?? []) expect(each).toEqual({ tid: expect.any(Number), nice: Math.min(19, ownNice + SPEECH_THREAD_NICENESS) });
    const tid = (priority as { tid: number }).tid;
    // The kernel agrees, and only that thread was lowered: the thread that started it is as it was.
    expect(threadStat(tid).nice).toBe(Math.min(19, ownNice + SPEECH_THREAD_NICENESS));
    expect(getPriority()).toBe(ownNice);
    // The steps are computed on the lowered thread itself (the runtime runs a session on its caller's thread).
    const before = threadStat(tid).cpuSeconds;
    const batch = 64;
    let state = loaded.model.initialState(batch);
    const input = new Float32Array(batch * (CONTEXT_SAMPLES + FRAME_SAMPLES)).map((_, i) => Math.sin(i / 7) * 0.3);
    for (let i = 0; i < 30; i++) {
      const step = await loaded.model.step(input, state, batch);
      expect(step.probabilities).toHaveLength(batch);
      state = step.state;
    }
    expect(threadStat(tid).cpuSeconds).toBeGreaterThan(before);
  });

  it.runIf(LINUX)("loads and runs as before when the kernel refuses to change the thread's priority", async () => {
    // A process whose setpriority() is refused (as a sandbox may): os.setPriority throws EPERM in every thread,
    // the model's included (a --require preload runs in worker threads too).
    const dir = await mkdtemp(join(tmpdir(), "speech-priority-"));
    try {
      await writeFile(
        join(dir, "refuse.cjs"),
        `const os = require("node:os");
os.setPriority = () => { const error = new Error("A system error occurred: uv_os_setpriority returned EPERM (operation not permitted)"); error.code = "ERR_SYSTEM_ERROR"; throw error; };
`,
      );
      const moduleUrl = new URL("../../src/analyse/speech-model.ts", import.meta.url).href;
      await writeFile(
        join(dir, "load.mts"),
        `import { readdirSync, readFileSync } from "node:fs";
const { loadSpeechModel, CONTEXT_SAMPLES, FRAME_SAMPLES } = await import(${JSON.stringify(moduleUrl)});
const loaded = await loadSpeechModel();
if (!("model" in loaded)) throw new Error(loaded.unavailable);
const step = await loaded.model.step(new Float32Array(CONTEXT_SAMPLES + FRAME_SAMPLES), loaded.model.initialState(1), 1);
const nices = readdirSync("/proc/self/task").map((tid) => { const s = readFileSync("/proc/self/task/" + tid + "/stat", "utf8"); return Number(s.slice(s.lastIndexOf(")") + 2).split(" ")[16]); });
console.log(JSON.stringify({ priority: loaded.model.threadPriorities?.[0], probabilities: step.probabilities.length, nices: [...new Set(nices)] }));
`,
      );
      const root = fileURLToPath(new URL("../../..", import.meta.url));
      const child = spawn(process.execPath, ["--require", join(dir, "refuse.cjs"), "--import", "tsx", join(dir, "load.mts")], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      const code = await new Promise<number | null>((done) => child.on("close", done));
      expect(code, err).toBe(0);
      const result = JSON.parse(out) as { priority: unknown; probabilities: number; nices: number[] };
      expect(result.priority).toEqual({ unchanged: expect.stringContaining("EPERM") });
      expect(result.probabilities).toBe(1);
      expect(result.nices).toEqual([getPriority()]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
