/**
 * The Worker under `wrangler dev`: D1 migrations applied to the persist
 * directory, then the dev server with containers disabled and the variables
 * given here. They go in an env file of their own: wrangler then skips the
 * project's .dev.vars (and .env), whose values would otherwise win over
 * `--var`, and they override wrangler.toml's [vars].
 */
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
  /**
   * Local simulations only (`wrangler dev --local`; default). Workers AI has
   * none, and without `--local` wrangler opens a remote session for it, which
   * needs a Cloudflare login (docs/decisions/0014-workers-ai-locally.md).
   */
  localOnly?: boolean;
  /** WRANGLER_LOG for the dev server, e.g. "warn" to skip a log line per request under load. */
  logLevel?: string;
  /** Also print wrangler's output here, prefixed with this label. */
  echo?: string;
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
export function wranglerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    CI: "true",
    NO_COLOR: "1",
    FORCE_COLOR: "0",
    ...extra,
  };
}

/** `wrangler d1 migrations apply DB --local` into `persistDir`; rejects with wrangler's output on failure. */
export async function applyMigrations(root: string, persistDir: string, logFile: string): Promise<void> {
  const child = startProcess({
    name: "D1 migrations",
    command: process.execPath,
    args: [wranglerBin(root), "d1", "migrations", "apply", "DB", "--local", "--persist-to", persistDir],
    cwd: root,
    env: wranglerEnv(),
    logFile,
  });
  const code = await child.exited;
  if (code !== 0) throw new Error(`D1 migrations failed (exit ${code ?? "signal"}):\n${child.tail()}`);
}

/**
 * dotenv (which wrangler reads the file with) expands `$NAME` and treats
 * quotes, `#` and backslashes specially: such values would not arrive as given.
 */
function envFileLine(name: string, value: string): string {
  if (/[\s"'#\\$`]/.test(value)) throw new Error(`${name}: a value with spaces, quotes, #, $ or \\ does not fit the env file`);
  return `${name}=${value}`;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const url = `http://127.0.0.1:${options.port}`;
  const lines = Object.entries(options.vars).map(([name, value]) => envFileLine(name, value));
  writeFileSync(options.envFile, `${lines.join("\n")}\n`, { mode: 0o600 });
  const child = startProcess({
    name: "worker (wrangler dev)",
    command: process.execPath,
    args: [
      wranglerBin(options.root),
      "dev",
      ...(options.localOnly === false ? [] : ["--local"]),
      "--ip", "127.0.0.1",
      "--port", String(options.port),
      "--inspector-port", String(options.inspectorPort),
      "--persist-to", options.persistDir,
      "--show-interactive-dev-session=false",
      "--enable-containers=false",
      // wrangler dev fires no cron: GET /__scheduled runs the sweep (src/jobs/sweep.ts) on demand.
      "--test-scheduled",
      "--env-file", options.envFile,
    ],
    cwd: options.root,
    env: wranglerEnv(options.logLevel ? { WRANGLER_LOG: options.logLevel } : {}),
    logFile: options.logFile,
    echo: options.echo,
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
