/**
 * `npm run dev`: the local stack. Creates .dev.vars when missing, applies the
 * D1 migrations locally, then runs `wrangler dev` (127.0.0.1:8787, containers
 * disabled) and the clip engine (127.0.0.1:8788) side by side with prefixed
 * logs. Ctrl-C (or SIGTERM) stops both; if either dies, the other is stopped
 * and this exits non-zero. `--no-engine` runs the Worker alone (API work,
 * benchmarks): jobs then stay queued until an engine is reachable.
 * `--port` / `--engine-port` move the two servers (defaults 8787 / 8788; the
 * engine and callback URLs in .dev.vars must then match).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { runToCompletion, startChild, stopChild, type Child } from "./lib/children.ts";
import { DEV_VARS_PATH, ensureDevVars, PROJECT_ROOT, readDevVars, TSX_BIN, WRANGLER_BIN, wranglerEnv } from "./lib/dev-vars.ts";

const WORKER_HOST = "127.0.0.1";

/** `--name value` from the command line, else the fallback. */
function numberFlag(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  const raw = index >= 0 ? process.argv[index + 1] : undefined;
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0 || value > 65535) throw new Error(`${name} needs a port number, got ${raw}`);
  return value;
}

const WORKER_PORT = numberFlag("--port", 8787);
const ENGINE_PORT = numberFlag("--engine-port", 8788);
const WORKER_URL = `http://${WORKER_HOST}:${WORKER_PORT}`;
const ENGINE_ENTRY = path.join(PROJECT_ROOT, "container", "src", "server.ts");

function say(message: string): void {
  process.stdout.write(`[dev] ${message}\n`);
}

async function waitForHealth(url: string, children: Child[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (children.some((child) => child.process.exitCode !== null)) return false;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

async function main(): Promise<number> {
  const withEngine = !process.argv.includes("--no-engine");
  if (ensureDevVars()) say(`created ${path.relative(PROJECT_ROOT, DEV_VARS_PATH)} from .dev.vars.example`);
  if (withEngine && !existsSync(ENGINE_ENTRY)) {
    say(`the engine entry ${path.relative(PROJECT_ROOT, ENGINE_ENTRY)} is missing`);
    return 1;
  }

  say("applying D1 migrations locally");
  const migrated = await runToCompletion("migrate", WRANGLER_BIN, ["d1", "migrations", "apply", "DB", "--local"], {
    cwd: PROJECT_ROOT,
    env: wranglerEnv({ CI: "true" }),
  });
  if (migrated !== 0) {
    say(`migrations failed (exit ${migrated})`);
    return 1;
  }

  const devVars = readDevVars();
  const children: Child[] = [
    startChild(
      "worker",
      WRANGLER_BIN,
      [
        "dev",
        "--local",
        "--ip",
        WORKER_HOST,
        "--port",
        String(WORKER_PORT),
        "--enable-containers=false",
        "--show-interactive-dev-session=false",
        // bench:api: every response reports the D1 statements it ran (src/http/d1-query-header.ts).
        ...(process.argv.includes("--count-d1") ? ["--var", "D1_QUERY_COUNT:header"] : []),
      ],
      { cwd: PROJECT_ROOT, env: wranglerEnv() },
    ),
  ];
  if (withEngine) {
    children.push(
      startChild("engine", TSX_BIN, [ENGINE_ENTRY], {
        cwd: PROJECT_ROOT,
        env: {
          ...process.env,
          HOST: "127.0.0.1",
          PORT: String(ENGINE_PORT),
          // The engine's own settings, from the same .dev.vars the Worker reads.
          ENGINE_SECRET: devVars.ENGINE_SECRET ?? "",
          CALLBACK_BASE: devVars.CALLBACK_BASE ?? "http://127.0.0.1:8787",
          ALLOW_PRIVATE_SOURCES: devVars.ALLOW_PRIVATE_SOURCES ?? "false",
        },
      }),
    );
  }

  let stopping = false;
  const stopAll = async () => {
    stopping = true;
    await Promise.all(children.map((child) => stopChild(child)));
  };
  const finished = new Promise<number>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      process.on(signal, () => {
        if (stopping) return;
        say(`${signal}: stopping`);
        void stopAll().then(() => resolve(0));
      });
    }
    for (const child of children) {
      void child.exited.then((code) => {
        if (stopping) return;
        say(`${child.name} exited (code ${code}); stopping the rest`);
        void stopAll().then(() => resolve(1));
      });
    }
  });

  const ready = await waitForHealth(`${WORKER_URL}/health`, children, 120_000);
  if (ready && !stopping) {
    const adminToken = readDevVars().ADMIN_TOKEN ?? "<ADMIN_TOKEN from .dev.vars>";
    say("ready");
    say(`  API        ${WORKER_URL}/api/v1   (OpenAPI: ${WORKER_URL}/api/v1/openapi.json)`);
    say(`  dashboard  ${WORKER_URL}/dashboard`);
    say(`  operator   ${WORKER_URL}/admin/v1 (ADMIN_TOKEN is in .dev.vars)`);
    say(`  engine     ${withEngine ? `http://127.0.0.1:${ENGINE_PORT}` : "not started (--no-engine)"}`);
    say("  try:");
    say(`    npm run admin -- create-account you@example.com --plan free`);
    say(`    curl -s -H "Authorization: Bearer $API_KEY" ${WORKER_URL}/api/v1/usage`);
    say(`    curl -s -H "Authorization: Bearer ${adminToken}" ${WORKER_URL}/admin/v1/plans`);
    say(`Ctrl-C stops ${withEngine ? "both processes" : "the Worker"}.`);
  } else if (!stopping) {
    say("the Worker did not become healthy in time");
    await stopAll();
    return 1;
  }
  return finished;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[dev] ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  },
);
