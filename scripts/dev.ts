/**
 * `npm run dev`: the local stack (scripts/local-stack/stack.ts) for a person
 * at a terminal. The Worker on 127.0.0.1:8787 (API, dashboard, operator API)
 * and the engine on 127.0.0.1:8788, with prefixed logs; state persists in
 * .wrangler/state (wrangler's default, so `wrangler d1 execute --local` sees
 * it). The Worker's variables come from .dev.vars, created from
 * .dev.vars.example with fresh secrets when missing. Ctrl-C (or SIGTERM)
 * stops both; if either dies, the other is stopped and this exits non-zero.
 * Options: USAGE below (`npm run dev -- --help`).
 */
import { join, relative, resolve } from "node:path";
import { DEV_VARS_PATH, ensureDevVars, readDevVars } from "./local-stack/dev-vars.ts";
import { PROJECT_ROOT } from "./local-stack/paths.ts";
import { portInUse } from "./local-stack/ports.ts";
import { startLocalStack, type LocalStack } from "./local-stack/stack.ts";
import { workersAiAccess } from "./local-stack/workers-ai.ts";

interface DevArgs {
  engine: boolean;
  /** Holds state, logs and engine work; unset: .wrangler/ (state in .wrangler/state). */
  dir: string | undefined;
  workerPort: number;
  enginePort: number;
  vars: Record<string, string>;
}

function say(message: string): void {
  process.stdout.write(`[dev] ${message}\n`);
}

const USAGE = `npm run dev [-- options]
  --no-engine           the Worker alone (API work): jobs stay queued
  --port N              the Worker's port (default 8787)
  --engine-port N       the engine's port (default 8788)
  --var NAME=VALUE      a Worker variable over .dev.vars (repeatable)
  --dir DIR             state, logs and engine work under DIR instead of .wrangler/`;

function portValue(flag: string, raw: string | undefined): number {
  const value = Number(raw);
  if (raw === undefined || !Number.isInteger(value) || value <= 0 || value > 65535) throw new Error(`${flag} needs a port number, got ${raw ?? "nothing"}`);
  return value;
}

function parseDevArgs(argv: string[]): DevArgs {
  const args: DevArgs = { engine: true, dir: undefined, workerPort: 8787, enginePort: 8788, vars: {} };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i]!;
    if (flag === "--help" || flag === "-h") {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (flag === "--no-engine") args.engine = false;
    else if (flag === "--port") args.workerPort = portValue(flag, argv[++i]);
    else if (flag === "--engine-port") args.enginePort = portValue(flag, argv[++i]);
    else if (flag === "--dir") {
      const dir = argv[++i];
      if (!dir) throw new Error("--dir needs a directory");
      args.dir = resolve(dir);
    } else if (flag === "--var") {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(argv[++i] ?? "");
      if (!match) throw new Error("--var needs NAME=VALUE");
      args.vars[match[1]!] = match[2]!;
    } else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  return args;
}

/**
 * The addresses .dev.vars.example used to carry for the default ports. The
 * launcher derives them from the ports in use, so these stock values are
 * dropped (they would be wrong with --port); other values stay, to point
 * the Worker at an engine or CDN elsewhere.
 */
const STOCK_ADDRESSES: Record<string, string> = {
  ENGINE_URL: "http://127.0.0.1:8788",
  CALLBACK_BASE: "http://127.0.0.1:8787",
  CDN_URL: "http://127.0.0.1:8787/cdn",
};

function workerVars(fromFile: Record<string, string>, overrides: Record<string, string>): Record<string, string> {
  const vars = Object.fromEntries(Object.entries(fromFile).filter(([name, value]) => STOCK_ADDRESSES[name] !== value));
  return { ...vars, ...overrides };
}

function printReady(stack: LocalStack, args: DevArgs): void {
  say("ready");
  say(`  API        ${stack.workerUrl}/api/v1   (OpenAPI: ${stack.workerUrl}/api/v1/openapi.json)`);
  say(`  dashboard  ${stack.workerUrl}/dashboard`);
  say(`  operator   ${stack.workerUrl}/admin/v1 (ADMIN_TOKEN is in .dev.vars)`);
  say(`  engine     ${args.engine ? `${stack.engineUrl} (${stack.engineBackend} ffmpeg)` : "not started (--no-engine)"}`);
  say(`  logs       ${relative(PROJECT_ROOT, stack.logsDir)}`);
  say("  try:");
  say(`    npm run admin -- create-account you@example.com --plan free`);
  say(`    curl -s -H "Authorization: Bearer $API_KEY" ${stack.workerUrl}/api/v1/usage`);
  say(`    curl -s -H "Authorization: Bearer $ADMIN_TOKEN" ${stack.workerUrl}/admin/v1/plans`);
  say(`Ctrl-C stops ${args.engine ? "both processes" : "the Worker"}.`);
}

async function main(): Promise<number> {
  const args = parseDevArgs(process.argv.slice(2));
  if (ensureDevVars()) say(`created ${relative(PROJECT_ROOT, DEV_VARS_PATH)} from .dev.vars.example`);
  for (const [name, port] of [["--port", args.workerPort], ["--engine-port", args.enginePort]] as const) {
    if ((name === "--port" || args.engine) && (await portInUse(port))) {
      say(`port ${port} is in use (another npm run dev?); choose another with ${name}`);
      return 1;
    }
  }

  const ai = workersAiAccess(process.env);
  say(ai.notice);
  say(`starting the Worker (wrangler dev --local)${args.engine ? " and the engine" : ""}`);
  let stack: LocalStack | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= stack?.stop() ?? Promise.resolve());
  const interrupted = new Promise<number>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      process.on(signal, () => {
        if (stopping) return;
        say(`${signal}: stopping`);
        void stop().then(() => resolve(0));
      });
    }
  });

  const starting = startLocalStack({
    root: PROJECT_ROOT,
    dir: args.dir ?? join(PROJECT_ROOT, ".wrangler", "dev"),
    stateDir: args.dir === undefined ? join(PROJECT_ROOT, ".wrangler", "state") : undefined,
    workerPort: args.workerPort,
    enginePort: args.enginePort,
    engine: args.engine,
    // The user's Cloudflare credentials first; .dev.vars and --var may pin other values.
    vars: { ...ai.vars, ...workerVars(readDevVars(), args.vars) },
    echo: true,
  });
  // Ctrl-C during the start: the launcher stops whatever it started once the start settles.
  const started = await Promise.race([starting.then((value) => ({ stack: value })), interrupted.then((code) => ({ code }))]);
  if ("code" in started) {
    await starting.then((value) => value.stop()).catch(() => undefined);
    return started.code;
  }
  stack = started.stack;
  printReady(stack, args);
  return Promise.race([
    interrupted,
    stack.unexpectedExit.then(async (message) => {
      say(`${message}; stopping the rest`);
      await stop();
      return 1;
    }),
  ]);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[dev] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
