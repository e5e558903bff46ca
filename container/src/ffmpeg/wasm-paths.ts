import path from "node:path";
import type { RunRequest } from "./runner.ts";
import type { MappedFile } from "./wasm-protocol.ts";

/**
 * Maps a request's declared files into the wasm core's in-memory file system
 * and rewrites the arguments to match. Each file keeps its base name, because
 * ffmpeg picks muxers (and ffprobe titles) from the extension.
 *
 * An absolute path in the arguments that was not declared would silently read
 * or write nothing inside the core, so it is refused instead.
 */
export interface MappedRequest {
  args: string[];
  inputs: MappedFile[];
  outputs: MappedFile[];
}

/** Paths that exist inside the core itself. */
const CORE_PATHS = new Set(["/dev/null"]);

export function mapRequestFiles(req: Pick<RunRequest, "args" | "inputs" | "outputs">): MappedRequest {
  const memByDisk = new Map<string, string>();
  const mapAll = (files: string[], prefix: string): MappedFile[] => {
    const mapped: MappedFile[] = [];
    for (const file of files) {
      const diskPath = path.resolve(file);
      if (memByDisk.has(diskPath)) continue;
      const memPath = `/io/${prefix}${mapped.length}/${path.basename(diskPath)}`;
      memByDisk.set(diskPath, memPath);
      mapped.push({ diskPath, memPath });
    }
    return mapped;
  };
  const inputs = mapAll(req.inputs, "in");
  const outputs = mapAll(req.outputs, "out");

  const rewrite = (arg: string): string => {
    const scheme = arg.startsWith("file:") ? "file:" : "";
    const candidate = arg.slice(scheme.length);
    if (!path.isAbsolute(candidate) && !memByDisk.has(path.resolve(candidate))) return arg;
    const mem = memByDisk.get(path.resolve(candidate));
    if (mem) return scheme + mem;
    if (CORE_PATHS.has(candidate)) return arg;
    throw new Error(`wasm ffmpeg: ${candidate} appears in the arguments but is not a declared input or output`);
  };
  return { args: req.args.map(rewrite), inputs, outputs };
}
