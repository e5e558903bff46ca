/**
 * Messages between the wasm runner (main thread) and its worker thread, which
 * runs one ffmpeg/ffprobe command at a time in a fresh instance of the
 * WebAssembly core.
 */

export type WasmTool = "ffmpeg" | "ffprobe";

/** A file on disk and the name it has inside the core's in-memory file system. */
export interface MappedFile {
  diskPath: string;
  memPath: string;
}

/** An input, opened by the main thread; the worker reads it through the shared descriptor. */
export interface OpenedInput extends MappedFile {
  fd: number;
  size: number;
}

export interface WorkerSetup {
  /** Compiled once in the main thread and shared, so each run only instantiates. */
  wasmModule: WebAssembly.Module;
  /** file: URL of @ffmpeg/core's ESM build. */
  coreUrl: string;
}

export interface RunCommand {
  type: "run";
  tool: WasmTool;
  /** Arguments with file paths already rewritten to memPaths. */
  args: string[];
  inputs: OpenedInput[];
  outputs: MappedFile[];
}

export type WorkerMessage =
  | { type: "stderr"; line: string }
  | { type: "stdout"; line: string }
  | {
      type: "done";
      exitCode: number;
      /** Size the instance's linear memory grew to, so the runner can recycle a bloated thread. */
      heapBytes: number;
    }
  | { type: "failed"; message: string };
