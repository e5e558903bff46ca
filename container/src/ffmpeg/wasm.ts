/**
 * The WebAssembly ffmpeg backend (@ffmpeg/core 0.12: ffmpeg 5.1.4 built with
 * --disable-pthreads, so no `-threads` option is needed), used where no native
 * ffmpeg is installed so that `npm install` alone gives a working engine for
 * small sources. The core is called directly rather than through
 * @ffmpeg/ffmpeg: the 0.12 wrapper is browser-only, and the 0.11 line needs
 * process-wide Node flags and `-threads 1`.
 *
 * Each command runs in a worker thread (see wasm-worker.ts for why) on a
 * fresh core instance; the compiled module is shared, so a run costs only an
 * instantiation (tens of milliseconds). An idle thread is kept for the next
 * command; a thread is terminated on abort or timeout, and recycled after a
 * run that grew its memory a lot, so memory returns to the system.
 *
 * Inputs are not copied into the core: they are mounted read-only and read
 * from disk on demand (wasm-diskfs.ts), so memory does not grow with the
 * source. Outputs live in the core's memory until the run ends, then are
 * written to disk. stdout carries text only (ffprobe's JSON), never media.
 *
 * Memory, measured (bench/ffmpeg-backends.ts): compiling the core adds about
 * 95 MB to the process; a 10 s 720x1280 render adds about 165 MB while it
 * runs; a 94 MB source adds 13 MB for the audio analysis pass and 35 MB for
 * a clip render, where copying it into the core cost 110-130 MB.
 */
import { existsSync } from "node:fs";
import { open, readFile, type FileHandle } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { JobFailure } from "../shared/errors.ts";
import { childEnvironment, ProcessTimeoutError } from "../shared/spawn.ts";
import type { FfmpegRunner, RunRequest, RunResult } from "./runner.ts";
import { mapRequestFiles } from "./wasm-paths.ts";
import type { MappedFile, OpenedInput, RunCommand, WasmTool, WorkerMessage, WorkerSetup } from "./wasm-protocol.ts";

/**
 * The wasm backend's own source cap. Memory does not depend on the source
 * size (see above), so the cap is about time: the single-threaded build runs
 * about 7-10x slower than native (a 10 s 720x1280 clip: 115 s against 17 s
 * on a loaded 2-core machine), and 256 MiB is roughly ten minutes of 720p or
 * a few minutes of 1080p, which still finishes in tens of minutes.
 */
export const DEFAULT_WASM_MAX_SOURCE_BYTES = 256 * 1024 * 1024;

/** A thread whose core grew past this is terminated rather than reused. */
const RECYCLE_HEAP_BYTES = 512 * 1024 * 1024;
const MAX_STDOUT_CHARS = 16 * 1024 * 1024;
const STDERR_TAIL_CHARS = 8 * 1024;

export interface WasmRunnerOptions {
  maxSourceBytes?: number;
}

const requireHere = createRequire(import.meta.url);

interface CoreFiles {
  coreUrl: string;
  wasmPath: string;
}

function locateCore(): CoreFiles {
  // "@ffmpeg/core/wasm" resolves (require condition) to dist/umd/ffmpeg-core.wasm;
  // the ESM build sits beside it in dist/esm with an identical wasm binary.
  const umdWasm = requireHere.resolve("@ffmpeg/core/wasm");
  const esmDir = new URL("../esm/", pathToFileURL(umdWasm));
  return { coreUrl: new URL("ffmpeg-core.js", esmDir).href, wasmPath: fileURLToPath(new URL("ffmpeg-core.wasm", esmDir)) };
}

let setupPromise: Promise<WorkerSetup> | undefined;

/** Compiles the 32 MB core once per process. */
function loadSetup(): Promise<WorkerSetup> {
  setupPromise ??= (async () => {
    const { coreUrl, wasmPath } = locateCore();
    // Copied into a plain Uint8Array: WebAssembly wants an ArrayBuffer-backed view.
    const wasmModule = await WebAssembly.compile(new Uint8Array(await readFile(wasmPath)));
    return { coreUrl, wasmModule };
  })();
  setupPromise.catch(() => {
    setupPromise = undefined;
  });
  return setupPromise;
}

/**
 * Starts the worker thread. A build (esbuild) ships wasm-worker.js beside this
 * file; from source, the .ts worker is loaded through tsx, which a worker
 * thread does not inherit from the process's own loader.
 */
function spawnWorker(setup: WorkerSetup): Worker {
  const builtWorker = new URL("./wasm-worker.js", import.meta.url);
  // Like a child process, the thread that decodes media sees only the minimal environment (spawn.ts).
  const env = childEnvironment();
  if (existsSync(fileURLToPath(builtWorker))) return new Worker(builtWorker, { workerData: setup, env });
  const sourceWorker = new URL("./wasm-worker.ts", import.meta.url).href;
  let tsxApi: string;
  try {
    // The require condition gives the .cjs entry; its ESM twin sits beside it.
    tsxApi = pathToFileURL(requireHere.resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href;
  } catch {
    throw new Error("the WebAssembly ffmpeg backend runs from source only with tsx installed (npm install), or from a build that includes wasm-worker.js");
  }
  const boot = `import(${JSON.stringify(tsxApi)}).then((api) => api.tsImport(${JSON.stringify(sourceWorker)}, ${JSON.stringify(sourceWorker)}));`;
  return new Worker(boot, { eval: true, workerData: setup, env });
}

/** Threads ready for the next command, at most one, not keeping the process alive. */
const idleWorkers: Worker[] = [];
/** Every thread not yet exited, idle or busy. */
const liveWorkers = new Set<Worker>();

/** Thread counts, so tests can see that an aborted run's thread is really gone. */
export function wasmThreadStats(): { alive: number; idle: number } {
  return { alive: liveWorkers.size, idle: idleWorkers.length };
}

function takeWorker(setup: WorkerSetup): Worker {
  let worker = idleWorkers.pop();
  if (!worker) {
    const spawned = spawnWorker(setup);
    liveWorkers.add(spawned);
    spawned.once("exit", () => {
      liveWorkers.delete(spawned);
      const idleAt = idleWorkers.indexOf(spawned);
      if (idleAt >= 0) idleWorkers.splice(idleAt, 1);
    });
    worker = spawned;
  }
  worker.ref();
  return worker;
}

function releaseWorker(worker: Worker, heapBytes: number): void {
  if (heapBytes > RECYCLE_HEAP_BYTES || idleWorkers.length > 0) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idleWorkers.push(worker);
}

function tooLarge(size: number, maxSourceBytes: number): JobFailure {
  const mib = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MiB`;
  return new JobFailure(
    "source_too_large",
    `The file is ${mib(size)}; the WebAssembly ffmpeg backend (used because no native ffmpeg was found) handles up to ${mib(maxSourceBytes)}. Install ffmpeg to process larger videos.`,
  );
}

/**
 * Opens the inputs for the worker to read, refusing any over the cap. The
 * caller closes the handles once the run is over, whatever its outcome.
 */
async function openInputs(inputs: MappedFile[], maxSourceBytes: number, handles: FileHandle[]): Promise<OpenedInput[]> {
  const opened: OpenedInput[] = [];
  for (const input of inputs) {
    const handle = await open(input.diskPath, "r");
    handles.push(handle);
    const { size } = await handle.stat();
    if (size > maxSourceBytes) throw tooLarge(size, maxSourceBytes);
    opened.push({ ...input, fd: handle.fd, size });
  }
  return opened;
}

async function runTool(tool: WasmTool, req: RunRequest, maxSourceBytes: number): Promise<RunResult> {
  if (req.signal?.aborted) throw req.signal.reason;
  // Streamed input is a native-only path: callers check the backend first (analyse/early.ts).
  if (req.stdin) throw new Error("the WebAssembly ffmpeg backend cannot read a stream");
  const mapped = mapRequestFiles(req);
  const handles: FileHandle[] = [];
  try {
    const inputs = await openInputs(mapped.inputs, maxSourceBytes, handles);
    const setup = await loadSetup();
    if (req.signal?.aborted) throw req.signal.reason;
    return await runInWorker(setup, { type: "run", tool, args: mapped.args, inputs, outputs: mapped.outputs }, req);
  } finally {
    // Only after the worker finished or was terminated: it reads through these descriptors.
    await Promise.all(handles.map((handle) => handle.close()));
  }
}

function runInWorker(setup: WorkerSetup, command: RunCommand, req: RunRequest): Promise<RunResult> {
  const { tool } = command;
  const worker = takeWorker(setup);
  const stdoutLines: string[] = [];
  let stdoutChars = 0;
  let stderrTail = "";

  return new Promise<RunResult>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void, heapBytes?: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onAbort);
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      if (heapBytes !== undefined) {
        releaseWorker(worker, heapBytes);
        outcome();
        return;
      }
      // Settle only once the thread is gone: it may still be reading an input descriptor.
      worker.terminate().then(outcome, outcome);
    };
    const timer = setTimeout(
      () => settle(() => reject(new ProcessTimeoutError(`${tool} (wasm)`, req.timeoutMs))),
      req.timeoutMs,
    );
    const onAbort = () => settle(() => reject(req.signal?.reason));
    req.signal?.addEventListener("abort", onAbort, { once: true });

    const onMessage = (message: WorkerMessage) => {
      switch (message.type) {
        case "stderr":
          stderrTail = (stderrTail + message.line + "\n").slice(-STDERR_TAIL_CHARS);
          req.onStderrLine?.(message.line);
          break;
        case "stdout":
          if (stdoutChars < MAX_STDOUT_CHARS) {
            stdoutLines.push(message.line);
            stdoutChars += message.line.length + 1;
          }
          break;
        case "done": {
          const stdout = stdoutLines.length > 0 ? `${stdoutLines.join("\n")}\n` : "";
          settle(() => resolve({ exitCode: message.exitCode, stdout, stderrTail }), message.heapBytes);
          break;
        }
        case "failed":
          settle(() => reject(new Error(`wasm ${tool} failed: ${message.message}`)));
          break;
      }
    };
    const onError = (error: Error) => settle(() => reject(new Error(`wasm ${tool} worker crashed: ${error.message}`)));
    const onExit = (code: number) => settle(() => reject(new Error(`wasm ${tool} worker exited unexpectedly (code ${code})`)));
    worker.on("message", onMessage).on("error", onError).on("exit", onExit);

    worker.postMessage(command);
  });
}

export async function createWasmRunner(opts: WasmRunnerOptions = {}): Promise<FfmpegRunner> {
  const maxSourceBytes = opts.maxSourceBytes ?? DEFAULT_WASM_MAX_SOURCE_BYTES;
  // Compile now, so a broken install shows at start-up rather than in a job.
  await loadSetup();
  return {
    backend: "wasm",
    maxSourceBytes,
    ffmpeg: (req) => runTool("ffmpeg", req, maxSourceBytes),
    ffprobe: (req) => runTool("ffprobe", req, maxSourceBytes),
  };
}
