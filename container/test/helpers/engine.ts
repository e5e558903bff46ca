import { readdir } from "node:fs/promises";
import path from "node:path";
import { ENGINE_SIGNATURE_HEADER, importSigningKey, signEngineRequest, type ClipConfig, type StartJob } from "#contract";
import type { EngineConfig } from "../../src/shared/config.ts";
import { createEngineServer, type EngineServer, type EngineServerOptions } from "../../src/http/app.ts";
import { nativeRunner } from "./media.ts";

/** A real engine server on a loopback port, with native ffmpeg and its own work dir. */
export interface TestEngine {
  engine: EngineServer;
  base: string;
  workDir: string;
  /** Work directories still present for a job. */
  workDirsOf(jobId: string): Promise<string[]>;
  close(): Promise<void>;
}

/** The test "Worker"'s Ed25519 key pair: the private half signs (ENGINE_SIGNING_KEY), test engines verify with the public half. */
export const TEST_SIGNING_KEY = "MC4CAQAwBQYDK2VwBCIEIM+4rWre9FbEwnWNez4UsvpZ5kZnE6vGc6mHV3Z6bnBD";
export const TEST_VERIFY_KEY = "tp8EprDXDsleEpximlZXhS0igYQJplSjj5vWRvDO60M";
/** Another key pair, for requests an engine must refuse as forged. */
export const OTHER_SIGNING_KEY = "MC4CAQAwBQYDK2VwBCIEIG+/Cp5HI/Pqo8otdoFlUhQKHHQZz9Q8z2OEXFmxriNu";

/** The engine settings that come from its environment, per test engine. */
export interface EngineSettings {
  callbackBase?: string;
  allowPrivateHosts?: boolean;
  renderConcurrency?: number;
  /**
   * How long a download may receive nothing. 30 s by default: a test's source
   * server shares the machine (and often the process) with the engine, and a
   * loaded machine can starve it for seconds; a test about stalls asks for less.
   */
  downloadStallTimeoutMs?: number;
}

export function testConfig(workDir: string, settings: EngineSettings = {}): EngineConfig {
  return {
    engineVerifyKey: TEST_VERIFY_KEY,
    callbackBase: settings.callbackBase ?? "http://127.0.0.1:9",
    // Tests serve their sources on loopback.
    allowPrivateHosts: settings.allowPrivateHosts ?? true,
    port: 0,
    host: "127.0.0.1",
    workDir,
    ytdlpPath: null,
    platformProxy: null,
    downloadStallTimeoutMs: settings.downloadStallTimeoutMs ?? 30_000,
    maxRedirects: 5,
    callbackAttempts: 3,
    callbackRetryBaseMs: 50,
    callbackTimeoutMs: 10_000,
    progressHeartbeatMs: 500,
    renderConcurrency: settings.renderConcurrency ?? 1,
  };
}

export async function startTestEngine(
  workDir: string,
  extra: Partial<EngineServerOptions> = {},
  settings: EngineSettings = {},
): Promise<TestEngine> {
  const engine = createEngineServer({ config: testConfig(workDir, settings), runner: nativeRunner(), ...extra });
  const address = await engine.listen(0, "127.0.0.1");
  return {
    engine,
    base: `http://127.0.0.1:${address.port}`,
    workDir,
    async workDirsOf(jobId) {
      const names = await readdir(workDir).catch(() => [] as string[]);
      return names.filter((n) => n.startsWith(`${jobId}-`)).map((n) => path.join(workDir, n));
    },
    close: () => engine.shutdown(),
  };
}

let sequence = 0;
/** A valid job id (job_ + 20 alphanumerics), unique per call. */
export function newJobId(label: string): string {
  sequence += 1;
  const suffix = `${label}${String(sequence).padStart(4, "0")}${Date.now().toString(36)}`.replace(/[^A-Za-z0-9]/g, "");
  return `job_${suffix.padEnd(20, "x").slice(0, 32)}`;
}

export function startJobBody(args: {
  jobId: string;
  token: string;
  videoUrl: string;
  config: ClipConfig;
  maxSourceSeconds?: number;
}): StartJob {
  return {
    job_id: args.jobId,
    token: args.token,
    video_url: args.videoUrl,
    video_type: "general",
    config: args.config,
    limits: {
      max_source_bytes: 512 * 1024 * 1024,
      max_source_seconds: args.maxSourceSeconds ?? 3600,
      download_timeout_seconds: 60,
    },
  };
}

/** A signature header as the Worker makes one (each with a fresh nonce). */
export async function signedHeader(request: { method: string; path: string; body: string }, signingKey = TEST_SIGNING_KEY, nowMs?: number): Promise<string> {
  return signEngineRequest(await importSigningKey(signingKey), request, nowMs);
}

/**
 * POSTs JSON to a test engine, signed with TEST_SIGNING_KEY as the Worker
 * signs StartJob and cancel (pass `signed: false` to send it unsigned).
 */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  options: { signed?: boolean; signingKey?: string } = {},
): Promise<{ status: number; json: unknown }> {
  const payload = body === undefined ? "" : JSON.stringify(body);
  const sent: Record<string, string> = { "content-type": "application/json" };
  if (options.signed !== false) {
    sent[ENGINE_SIGNATURE_HEADER] = await signedHeader({ method: "POST", path: new URL(url).pathname, body: payload }, options.signingKey);
  }
  const res = await fetch(url, { method: "POST", headers: { ...sent, ...headers }, body: payload });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}
