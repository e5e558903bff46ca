/**
 * The Worker under `wrangler dev`: D1 migrations applied to the persist
 * directory first, then the dev server with containers disabled and the
 * variables given here. They go in an env file of their own: wrangler then
 * skips the project's .dev.vars, whose values would otherwise win over
 * `--var`, and they override wrangler.toml's [vars].
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startProcess, type ManagedProcess } from "./processes.ts";
import { waitForHttpOk } from "./poll.ts";

export interface WorkerOptions {
  root: string;
  port: number;
  inspectorPort: number;
  persistDir: string;
  vars: Record<string, string>;
  /** Where the variables are written for wrangler (a file in the stack's own directory). */
  envFile: string;
  logFile: string;
  readyTimeoutMs?: number;
}

export interface RunningWorker {
  url: string;
  process: ManagedProcess;
}

function wranglerBin(root: string): string {
  return join(root, "node_modules", "wrangler", "bin", "wrangler.js");
}

/** wrangler without telemetry, without the Request.cf download, without prompts. */
export function wranglerEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    CI: "true",
    NO_COLOR: "1",
    FORCE_COLOR: "0",
  };
}

/** `wrangler d1 migrations apply DB --local` into `persistDir`; rejects with wrangler's output on failure. */
export function applyMigrations(root: string, persistDir: string): Promise<void> {
  const args = [wranglerBin(root), "d1", "migrations", "apply", "DB", "--local", "--persist-to", persistDir];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: wranglerEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString("utf8")).slice(-4000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`D1 migrations failed (exit ${code}):\n${output.trim()}`));
    });
  });
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const url = `http://127.0.0.1:${options.port}`;
  const lines = Object.entries(options.vars).map(([name, value]) => {
    if (/[\s"'#\\]/.test(value)) throw new Error(`${name}: a value with spaces, quotes or # does not fit the env file`);
    return `${name}=${value}`;
  });
  writeFileSync(options.envFile, `${lines.join("\n")}\n`, { mode: 0o600 });
  const child = startProcess({
    name: "worker (wrangler dev)",
    command: process.execPath,
    args: [
      wranglerBin(options.root),
      "dev",
      // Local bindings only: Workers AI has no local simulation (wrangler.toml [ai]).
      "--local",
      "--ip", "127.0.0.1",
      "--port", String(options.port),
      "--inspector-port", String(options.inspectorPort),
      "--persist-to", options.persistDir,
      "--show-interactive-dev-session=false",
      "--enable-containers=false",
      "--env-file", options.envFile,
    ],
    cwd: options.root,
    env: wranglerEnv(),
    logFile: options.logFile,
  });
  try {
    const health = await waitForHttpOk(`${url}/health`, options.readyTimeoutMs ?? 90_000, child.isRunning, child.name);
    await health.body?.cancel();
  } catch (error) {
    await child.stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- last lines of ${child.logFile}:\n${child.tail()}`);
  }
  return { url, process: child };
}
