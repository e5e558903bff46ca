/**
 * Worker-thread side of the wasm runner: for each command it instantiates a
 * fresh @ffmpeg/core (cheap, the module is compiled once by the main thread),
 * mounts the declared inputs (read from disk on demand), runs ffmpeg or
 * ffprobe synchronously, and writes the declared outputs back to disk.
 *
 * Living in its own thread has three reasons: the core blocks while it runs
 * (the HTTP server must stay responsive), it cannot be interrupted from
 * inside (terminating the thread is the only reliable abort), and the
 * browser globals the core expects (`self`, `self.location`) stay confined to
 * this thread instead of leaking into the server's.
 */
import { writeFileSync } from "node:fs";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { mountDiskFiles, type EmscriptenFs } from "./wasm-diskfs.ts";
import type { MappedFile, OpenedInput, RunCommand, WorkerMessage, WorkerSetup } from "./wasm-protocol.ts";

interface CoreFs extends EmscriptenFs {
  readFile(path: string): Uint8Array;
  analyzePath(path: string): { exists: boolean };
}

/** The part of @ffmpeg/core 0.12's module object this runner uses. */
interface FfmpegCore {
  /** Runs ffmpeg; returns the exit code it recorded (-1 when it recorded none). */
  exec(...args: string[]): number;
  /** The raw ffprobe entry point: argc, argv pointer; returns the exit code. */
  _ffprobe(argc: number, argv: number): number;
  stringsToPtr(strings: string[]): number;
  ret: number;
  setLogger(logger: (entry: { type: string; message: string }) => void): void;
  FS: CoreFs;
  HEAPU8: Uint8Array;
}

type CoreFactory = (moduleOverrides: {
  instantiateWasm(
    imports: WebAssembly.Imports,
    receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
  ): object;
}) => Promise<FfmpegCore>;

const setup = workerData as WorkerSetup;
function requireParentPort(): MessagePort {
  if (!parentPort) throw new Error("wasm-worker.ts must run in a worker thread");
  return parentPort;
}
const port = requireParentPort();

// The core is an Emscripten build for browser workers: it reads
// `self.location.href` once at load (then uses its own import.meta.url).
Object.assign(globalThis, { self: globalThis, location: { href: setup.coreUrl } });

/** The core ends every run by printing this; it is noise, not ffmpeg output. */
const CORE_EXIT_NOISE = /^Aborted\(\)$/;

let factory: CoreFactory | undefined;

async function loadFactory(): Promise<CoreFactory> {
  if (!factory) {
    const imported = (await import(setup.coreUrl)) as { default: CoreFactory };
    factory = imported.default;
  }
  return factory;
}

async function newCore(): Promise<FfmpegCore> {
  const create = await loadFactory();
  return create({
    instantiateWasm(imports, receive) {
      WebAssembly.instantiate(setup.wasmModule, imports).then(
        (instance) => receive(instance, setup.wasmModule),
        (error: unknown) => post({ type: "failed", message: `instantiating the ffmpeg core failed: ${String(error)}` }),
      );
      return {};
    },
  });
}

function post(message: WorkerMessage): void {
  port.postMessage(message);
}

function parentDir(memPath: string): string {
  return memPath.slice(0, memPath.lastIndexOf("/")) || "/";
}

/** Inputs are read from disk on demand rather than copied into memory (see wasm-diskfs.ts). */
function mountInput(core: FfmpegCore, file: OpenedInput): void {
  const name = file.memPath.slice(file.memPath.lastIndexOf("/") + 1);
  mountDiskFiles(core.FS, parentDir(file.memPath), [{ name, fd: file.fd, size: file.size }]);
}

/** Writes back the outputs the command produced, as a native run would leave them on disk. */
function saveOutputs(core: FfmpegCore, outputs: MappedFile[]): void {
  for (const file of outputs) {
    if (!core.FS.analyzePath(file.memPath).exists) continue;
    writeFileSync(file.diskPath, core.FS.readFile(file.memPath));
  }
}

/** The core ends a run by throwing an "Aborted" error after recording the exit code. */
function isCoreExit(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("Aborted");
}

function runFfmpeg(core: FfmpegCore, args: string[]): number {
  const code = core.exec(...args);
  return code === -1 ? 1 : code;
}

/**
 * The core's own `ffprobe()` wrapper drops the entry point's return value and
 * reports -1 whatever happened, so the entry point is called directly.
 */
function runFfprobe(core: FfmpegCore, args: string[]): number {
  const argv = ["ffprobe", ...args];
  try {
    return core._ffprobe(argv.length, core.stringsToPtr(argv));
  } catch (error) {
    if (!isCoreExit(error)) throw error;
    return core.ret === -1 ? 1 : core.ret;
  }
}

async function run(command: RunCommand): Promise<void> {
  const core = await newCore();
  core.setLogger(({ type, message }) => {
    // ffmpeg ends progress lines with \r; the core only splits at \n.
    for (const line of message.split("\r")) {
      if (line === "") continue;
      if (type === "stdout") post({ type: "stdout", line });
      else if (!CORE_EXIT_NOISE.test(line)) post({ type: "stderr", line });
    }
  });
  for (const file of command.inputs) mountInput(core, file);
  for (const file of command.outputs) core.FS.mkdirTree(parentDir(file.memPath));
  const exitCode = command.tool === "ffmpeg" ? runFfmpeg(core, command.args) : runFfprobe(core, command.args);
  saveOutputs(core, command.outputs);
  post({ type: "done", exitCode, heapBytes: core.HEAPU8.byteLength });
}

port.on("message", (command: RunCommand) => {
  run(command).catch((error: unknown) => {
    post({ type: "failed", message: error instanceof Error ? error.message : String(error) });
  });
});
