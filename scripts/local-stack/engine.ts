/** The clip engine (container/src/server.ts) as a plain local process under tsx. */
import { join } from "node:path";
import { startProcess, type ManagedProcess } from "./processes.ts";
import { waitForHttpOk } from "./poll.ts";

export interface EngineOptions {
  root: string;
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
const WORKER_SECRETS = ["ENGINE_SIGNING_KEY", "CALLBACK_TOKEN_SECRET", "ADMIN_TOKEN", "ENGINE_SECRET"];

export async function startEngine(options: EngineOptions): Promise<RunningEngine> {
  const url = `http://127.0.0.1:${options.port}`;
  const inherited = { ...process.env };
  for (const name of WORKER_SECRETS) delete inherited[name];
  const child = startProcess({
    name: "engine (container/src/server.ts)",
    command: process.execPath,
    args: ["--import", "tsx", join("container", "src", "server.ts")],
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
