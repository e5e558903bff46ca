/**
 * The local stack in one call, and the only place that starts it: the Worker
 * under `wrangler dev --local` and the engine process, wired to each other on
 * loopback ports. `npm run dev` (scripts/dev.ts), `npm run demo`, the e2e
 * harness, the benches and `npm run openapi:snapshot` all start it here,
 * differing only in options: fixed or free ports, engine or not, persisted
 * or throwaway storage, extra Worker variables.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildLocalEngine, startEngine, type RunningEngine } from "./engine.ts";
import { newEngineKeys, verifyKeyOf } from "./engine-keys.ts";
import { freePort } from "./ports.ts";
import { applyMigrations, startWorker, type RunningWorker } from "./worker.ts";

export interface StackOptions {
  /** The project root (where wrangler.toml and container/ are). */
  root: string;
  /** Holds logs/, engine-work/, the engine's bundle (engine-bundle/), the Worker's env file and (unless `stateDir` says otherwise) state/. */
  dir: string;
  /** D1, R2, queues and Durable Objects (wrangler's --persist-to); default `dir`/state. */
  stateDir?: string;
  /** Start from empty storage (tests); otherwise state persists across runs (demo, dev). */
  fresh?: boolean;
  /** Remove the storage and engine work directories on stop, keeping only the logs (tests). */
  ephemeral?: boolean;
  /** Fixed ports (dev, demo); unset: any free ones, so stacks never collide (tests, benches). */
  workerPort?: number;
  enginePort?: number;
  /** Start the engine (default). Without it jobs stay queued; ENGINE_URL still names `enginePort`. */
  engine?: boolean;
  /** `wrangler dev --local` (default): no remote bindings, no Cloudflare login needed. */
  localOnly?: boolean;
  /**
   * Worker variables over the local defaults (random secrets, addresses from
   * the ports, private sources allowed, one engine instance): e.g.
   * MAX_SOURCE_SECONDS for tests, `.dev.vars` for `npm run dev`,
   * D1_QUERY_COUNT for a bench. CALLBACK_BASE and ALLOW_PRIVATE_SOURCES
   * reach the engine too, and ENGINE_VERIFY_KEY, the public half of
   * ENGINE_SIGNING_KEY; the Worker's secrets never do.
   */
  vars?: Record<string, string>;
  /** Engine environment on top of what it gets from `vars`. */
  engineEnv?: Record<string, string>;
  /** Also print both processes' output on this terminal, prefixed [worker] / [engine] (dev). */
  echo?: boolean;
  /** WRANGLER_LOG for the dev server ("warn" spares a log line per request under load). */
  wranglerLogLevel?: string;
}

export interface LocalStack {
  workerUrl: string;
  cdnUrl: string;
  engineUrl: string;
  adminToken: string;
  /** "native" or "wasm", as the engine's /health reports it; null without an engine. */
  engineBackend: string | null;
  logsDir: string;
  /**
   * Resolves with a sentence when the Worker or the engine exits without
   * being asked to (stop, killEngine, stopEngine); never resolves otherwise.
   */
  unexpectedExit: Promise<string>;
  /** SIGKILL the engine and everything it spawned, as a crash would. */
  killEngine(): Promise<void>;
  /** SIGTERM to the engine, as a redeploy sends; resolves once it exited (SIGKILL after graceMs). */
  stopEngine(graceMs?: number): Promise<void>;
  /** Starts the engine again on the same port (after killEngine or stopEngine). */
  restartEngine(): Promise<void>;
  /** Stops both processes and everything they started; resolves once they are gone. */
  stop(): Promise<void>;
  /** Process ids of wrangler dev and the engine (null without one), for a bench's CPU figures. */
  pids(): { worker: number; engine: number | null };
}

function secret(prefix: string): string {
  return `${prefix}-${randomBytes(18).toString("hex")}`;
}

export async function startLocalStack(options: StackOptions): Promise<LocalStack> {
  const withEngine = options.engine !== false;
  const stateDir = options.stateDir ?? join(options.dir, "state");
  const logsDir = join(options.dir, "logs");
  const engineWorkDir = join(options.dir, "engine-work");
  const engineBundleDir = join(options.dir, "engine-bundle");
  if (options.fresh) rmSync(stateDir, { recursive: true, force: true });
  for (const dir of [stateDir, logsDir, engineWorkDir]) mkdirSync(dir, { recursive: true });

  const [workerPort, enginePort, inspectorPort] = await Promise.all([
    options.workerPort ?? freePort(),
    options.enginePort ?? freePort(),
    freePort(),
  ]);
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  const keys = newEngineKeys();
  const vars: Record<string, string> = {
    ADMIN_TOKEN: secret("local-admin"),
    ENGINE_SIGNING_KEY: keys.ENGINE_SIGNING_KEY,
    CALLBACK_TOKEN_SECRET: keys.CALLBACK_TOKEN_SECRET,
    ENGINE_URL: `http://127.0.0.1:${enginePort}`,
    CALLBACK_BASE: workerUrl,
    CDN_URL: `${workerUrl}/cdn`,
    ALLOW_PRIVATE_SOURCES: "true",
    // One engine process: one job at a time, like one Container instance.
    ENGINE_MAX_INSTANCES: "1",
    ...options.vars,
  };

  // Built once per stack, beside the Worker's start; a restart runs the same bundle.
  let bundle: Promise<string> | null = null;
  const launchEngine = async (): Promise<RunningEngine> =>
    startEngine({
      root: options.root,
      serverPath: await (bundle ??= buildLocalEngine(options.root, engineBundleDir)),
      port: enginePort,
      workDir: engineWorkDir,
      logFile: join(logsDir, "engine.log"),
      echo: options.echo ? "engine" : undefined,
      // The engine's own settings come from its environment, as in its Container:
      // the public key only, never the Worker's signing key or token secret.
      env: {
        ENGINE_VERIFY_KEY: verifyKeyOf(vars.ENGINE_SIGNING_KEY!),
        CALLBACK_BASE: vars.CALLBACK_BASE!,
        ALLOW_PRIVATE_SOURCES: vars.ALLOW_PRIVATE_SOURCES!,
        ...options.engineEnv,
      },
    });
  // The migrations complete before wrangler dev starts, so its port never
  // answers (not even /health) over a half-migrated database: a client that
  // waits for /health and then calls the API finds every table and column.
  // The engine's build and start run beside both.
  const launchWorker = async (): Promise<RunningWorker> => {
    await applyMigrations(options.root, stateDir, join(logsDir, "migrations.log"));
    return startWorker({
      root: options.root,
      port: workerPort,
      inspectorPort,
      persistDir: stateDir,
      vars,
      envFile: join(options.dir, "worker.env"),
      logFile: join(logsDir, "worker.log"),
      localOnly: options.localOnly,
      logLevel: options.wranglerLogLevel,
      echo: options.echo ? "worker" : undefined,
    });
  };

  const [engineResult, workerResult] = await Promise.allSettled([withEngine ? launchEngine() : Promise.resolve(null), launchWorker()]);
  if (engineResult.status === "rejected" || workerResult.status === "rejected") {
    if (engineResult.status === "fulfilled") await engineResult.value?.process.stop();
    if (workerResult.status === "fulfilled") await workerResult.value.process.stop();
    const failure = engineResult.status === "rejected" ? engineResult.reason : (workerResult as PromiseRejectedResult).reason;
    throw failure instanceof Error ? failure : new Error(String(failure));
  }
  let engine = engineResult.value;
  const worker = workerResult.value;

  // Exits the stack asked for are not news; any other exit is.
  let stopping = false;
  let engineStopAsked = false;
  let reportExit: (message: string) => void = () => {};
  const unexpectedExit = new Promise<string>((resolve) => {
    reportExit = resolve;
  });
  const watch = (running: RunningEngine | RunningWorker, label: string, asked: () => boolean): void => {
    void running.process.exited.then((code) => {
      if (!stopping && !asked()) reportExit(`${label} exited (${code === null ? "killed" : `code ${code}`}); see ${running.process.logFile}`);
    });
  };
  watch(worker, "the Worker (wrangler dev)", () => false);
  const watchEngine = (running: RunningEngine): void => {
    engineStopAsked = false;
    watch(running, "the engine", () => engineStopAsked || running !== engine);
  };
  if (engine) watchEngine(engine);

  const requireEngine = (): RunningEngine => {
    if (!engine) throw new Error("this stack runs without an engine");
    return engine;
  };

  return {
    workerUrl,
    cdnUrl: vars.CDN_URL!,
    engineUrl: vars.ENGINE_URL!,
    adminToken: vars.ADMIN_TOKEN!,
    engineBackend: engine?.backend ?? null,
    logsDir,
    unexpectedExit,
    async killEngine() {
      const running = requireEngine();
      engineStopAsked = true;
      running.process.kill();
      await running.process.exited;
    },
    async stopEngine(graceMs = 30_000) {
      const running = requireEngine();
      engineStopAsked = true;
      await running.process.stop(graceMs);
    },
    async restartEngine() {
      const running = requireEngine();
      engineStopAsked = true;
      if (running.process.isRunning()) await running.process.stop();
      engine = await launchEngine();
      watchEngine(engine);
    },
    pids: () => ({ worker: worker.process.pid, engine: engine?.process.pid ?? null }),
    async stop() {
      stopping = true;
      await Promise.all([engine?.process.stop(), worker.process.stop()]);
      if (options.ephemeral) {
        for (const dir of [stateDir, engineWorkDir, engineBundleDir]) rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
