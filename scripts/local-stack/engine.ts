/**
 * The clip engine as a local process: the same bundle its Container image
 * runs (scripts/lib/engine-build.ts), built into the stack's own directory,
 * under the same Node. Run from source under tsx instead, the engine's own
 * process spent about a fifth more CPU on a job (4.1-4.5 s against 3.4-3.7 s: a
 * 5-minute 1080p source cut to one short clip, 4 jobs each way), and a bench of the local stack measured that
 * instead of what production runs.
 */
import { rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { buildEngineBundle } from "../lib/engine-build.ts";
import { startProcess, type ManagedProcess } from "./processes.ts";
import { waitForHttpOk } from "./poll.ts";

export interface EngineOptions {
  root: string;
  /** The bundle's server.mjs (buildLocalEngine). */
  serverPath: string;
  port: number;
  workDir: string;
  logFile: string;
  /** Extra environment for the engine (FFMPEG_PATH, heartbeat, ...). */
  env?: Record<string, string>;
  /** Also print the engine's output here, prefixed with this label. */
  echo?: string;
  readyTimeoutMs?: number;
}

export interface RunningEngine {
  url: string;
  /** "native" or "wasm", as the engine's /health reports it. */
  backend: string;
  process: ManagedProcess;
}

/** The Worker's secrets: whatever the launching shell holds, an engine never inherits them. */
const WORKER_SECRETS = ["ENGINE_SIGNING_KEY", "CALLBACK_TOKEN_SECRET", "ADMIN_TOKEN", "ENGINE_SECRET", "COOKIES_KEY"];

/**
 * Builds the engine bundle into `dir`. Its one external run-time package
 * (onnxruntime-node, native) resolves through a node_modules link to the
 * project's, so the directory may be anywhere (`npm run dev --dir /elsewhere`).
 */
export async function buildLocalEngine(root: string, dir: string): Promise<string> {
  const built = await buildEngineBundle(root, dir);
  // Made anew each time: a kept stack directory (npm run dev) may hold a link to where the project used to be.
  const modules = join(dir, "node_modules");
  rmSync(modules, { force: true });
  symlinkSync(join(root, "node_modules"), modules, "dir");
  return built.serverPath;
}

export async function startEngine(options: EngineOptions): Promise<RunningEngine> {
  const url = `http://127.0.0.1:${options.port}`;
  const inherited = { ...process.env };
  for (const name of WORKER_SECRETS) delete inherited[name];
  const child = startProcess({
    name: "engine (server.mjs)",
    command: process.execPath,
    args: [options.serverPath],
    cwd: options.root,
    env: {
      ...inherited,
      ...options.env,
      PORT: String(options.port),
      HOST: "127.0.0.1",
      WORK_DIR: options.workDir,
    },
    logFile: options.logFile,
    echo: options.echo,
  });
  try {
    const health = await waitForHttpOk(`${url}/health`, options.readyTimeoutMs ?? 60_000, child.isRunning, child.name);
    const body = (await health.json()) as { backend?: unknown };
    return { url, backend: typeof body.backend === "string" ? body.backend : "unknown", process: child };
  } catch (error) {
    await child.stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- last lines of ${child.logFile}:\n${child.tail()}`);
  }
}
