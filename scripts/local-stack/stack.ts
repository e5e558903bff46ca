/**
 * The whole local stack in one call: the engine process and the Worker under
 * `wrangler dev`, wired to each other on loopback ports, with state, logs and
 * the engine's work directories under one directory. Used by `npm run demo`
 * and the end-to-end tests; `npm run dev` is the interactive equivalent.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startEngine, type RunningEngine } from "./engine.ts";
import { freePort } from "./ports.ts";
import { applyMigrations, startWorker, type RunningWorker } from "./worker.ts";

export interface StackOptions {
  /** The project root (where wrangler.toml and container/ are). */
  root: string;
  /** Holds state/ (D1, R2, queues, Durable Objects), logs/ and engine-work/. */
  dir: string;
  /** Start from empty storage (tests); otherwise state persists across runs (demo). */
  fresh?: boolean;
  /** Remove the storage and engine work directories on stop, keeping only the logs (tests). */
  ephemeral?: boolean;
  workerPort?: number;
  enginePort?: number;
  /** Worker variables on top of the local defaults (e.g. MAX_SOURCE_SECONDS). */
  vars?: Record<string, string>;
  /** Engine environment on top of the defaults. */
  engineEnv?: Record<string, string>;
}

export interface LocalStack {
  workerUrl: string;
  cdnUrl: string;
  engineUrl: string;
  adminToken: string;
  engineBackend: string;
  logsDir: string;
  /** SIGKILL the engine and everything it spawned, as a crash would. */
  killEngine(): Promise<void>;
  /** SIGTERM to the engine, as a redeploy sends; resolves once it exited (SIGKILL after graceMs). */
  stopEngine(graceMs?: number): Promise<void>;
  /** Starts the engine again on the same port (after killEngine or stopEngine). */
  restartEngine(): Promise<void>;
  stop(): Promise<void>;
}

function secret(prefix: string): string {
  return `${prefix}-${randomBytes(18).toString("hex")}`;
}

export async function startLocalStack(options: StackOptions): Promise<LocalStack> {
  const stateDir = join(options.dir, "state");
  const logsDir = join(options.dir, "logs");
  const engineWorkDir = join(options.dir, "engine-work");
  if (options.fresh) rmSync(stateDir, { recursive: true, force: true });
  for (const dir of [stateDir, logsDir, engineWorkDir]) mkdirSync(dir, { recursive: true });

  const [workerPort, enginePort, inspectorPort] = await Promise.all([
    options.workerPort ?? freePort(),
    options.enginePort ?? freePort(),
    freePort(),
  ]);
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const cdnUrl = `${workerUrl}/cdn`;
  const adminToken = secret("local-admin");
  const vars: Record<string, string> = {
    ADMIN_TOKEN: adminToken,
    ENGINE_SECRET: secret("local-engine"),
    ENGINE_URL: engineUrl,
    CALLBACK_BASE: workerUrl,
    CDN_URL: cdnUrl,
    ALLOW_PRIVATE_SOURCES: "true",
    // One engine process: one job at a time, like one Container instance.
    ENGINE_MAX_INSTANCES: "1",
    ...options.vars,
  };

  const launchEngine = (): Promise<RunningEngine> =>
    startEngine({
      root: options.root,
      port: enginePort,
      workDir: engineWorkDir,
      logFile: join(logsDir, "engine.log"),
      // The engine's own settings come from its environment, as in its Container.
      env: {
        ENGINE_SECRET: vars.ENGINE_SECRET!,
        CALLBACK_BASE: vars.CALLBACK_BASE!,
        ALLOW_PRIVATE_SOURCES: vars.ALLOW_PRIVATE_SOURCES!,
        ...options.engineEnv,
      },
    });
  // The migrations run beside wrangler dev's start (it opens D1 only on the
  // first request, which waits for both): about 5 s sooner than one after the other.
  const launchWorker = async (): Promise<RunningWorker> => {
    const starting = startWorker({
      root: options.root,
      port: workerPort,
      inspectorPort,
      persistDir: stateDir,
      vars,
      envFile: join(options.dir, "worker.env"),
      logFile: join(logsDir, "worker.log"),
    });
    const [migrated, worker] = await Promise.allSettled([applyMigrations(options.root, stateDir), starting]);
    if (migrated.status === "rejected") {
      if (worker.status === "fulfilled") await worker.value.process.stop();
      throw migrated.reason;
    }
    if (worker.status === "rejected") throw worker.reason;
    return worker.value;
  };

  const [engineResult, workerResult] = await Promise.allSettled([launchEngine(), launchWorker()]);
  if (engineResult.status === "rejected" || workerResult.status === "rejected") {
    if (engineResult.status === "fulfilled") await engineResult.value.process.stop();
    if (workerResult.status === "fulfilled") await workerResult.value.process.stop();
    const failure = engineResult.status === "rejected" ? engineResult.reason : (workerResult as PromiseRejectedResult).reason;
    throw failure instanceof Error ? failure : new Error(String(failure));
  }
  let engine = engineResult.value;
  const worker = workerResult.value;

  return {
    workerUrl,
    cdnUrl,
    engineUrl,
    adminToken,
    engineBackend: engine.backend,
    logsDir,
    async killEngine() {
      engine.process.kill();
      await engine.process.exited;
    },
    async stopEngine(graceMs = 30_000) {
      await engine.process.stop(graceMs);
    },
    async restartEngine() {
      if (engine.process.isRunning()) await engine.process.stop();
      engine = await launchEngine();
    },
    async stop() {
      await Promise.all([engine.process.stop(), worker.process.stop()]);
      if (options.ephemeral) {
        for (const dir of [stateDir, engineWorkDir]) rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
