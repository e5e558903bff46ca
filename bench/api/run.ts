/**
 * `npm run bench:api`: loopback load test of the Worker under `wrangler dev`.
 * Measures GET /health (no D1, no Durable Object) against an authenticated
 * GET /api/v1/jobs/:id of an active and of a finished job (key lookup cached
 * per isolate, one call to the account's Durable Object that counts the
 * request and brings the job's view back, no D1) in the same run, plus an
 * authenticated route without the job read to show where the time goes. The
 * bench's stack reports the D1 statements of each request (the
 * D1_QUERY_COUNT=header variable), and the table prints them per endpoint.
 * Starts the local stack without an engine (scripts/local-stack) on
 * BENCH_PORT (default 8797) with fresh storage and stops it afterwards; with
 * CLIPJOBS_URL set it measures that Worker instead (ADMIN_TOKEN from the
 * environment or .dev.vars).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { AdminClient } from "../../scripts/lib/admin-client.ts";
import { readDevVars } from "../../scripts/local-stack/dev-vars.ts";
import { PROJECT_ROOT } from "../../scripts/local-stack/paths.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";

/** A Worker to measure; unset: the bench starts its own on BENCH_PORT, away from any `npm run dev`. */
const EXTERNAL_URL = process.env.CLIPJOBS_URL?.replace(/\/+$/, "");
const BENCH_PORT = Number(process.env.BENCH_PORT ?? 8797);
const BASE_URL = EXTERNAL_URL ?? `http://127.0.0.1:${BENCH_PORT}`;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_SECONDS = 2;

async function healthy(): Promise<boolean> {
  try {
    return (await fetch(`${BASE_URL}/health`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/** The bench's own Worker: the local stack without an engine on BENCH_PORT, with throwaway storage. */
function startBenchStack(): Promise<LocalStack> {
  return startLocalStack({
    root: PROJECT_ROOT,
    dir: path.join(PROJECT_ROOT, ".tmp", "bench", `api-${Date.now()}`),
    fresh: true,
    ephemeral: true,
    workerPort: BENCH_PORT,
    engine: false,
    // Per-request log lines would cost wrangler CPU.
    wranglerLogLevel: "warn",
    // Every response reports the D1 statements it ran (src/http/d1-query-header.ts).
    vars: { D1_QUERY_COUNT: "header" },
  });
}

/** Submits a job; with no engine running it stays active (queued, retried by the queue) during the bench. */
async function submitJob(apiKey: string): Promise<string> {
  const headers = { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };
  const submitted = await fetch(`${BASE_URL}/api/v1/jobs`, {
    method: "POST",
    headers,
    body: JSON.stringify({ video_url: "https://videos.example.com/bench.mp4", video_type: "general" }),
  });
  if (submitted.status !== 201) throw new Error(`submitting the bench job failed: ${submitted.status} ${await submitted.text()}`);
  const { job_id: jobId } = (await submitted.json()) as { job_id: string };
  return jobId;
}

/** A finished job to read: submitted, then canceled. */
async function createFinishedJob(apiKey: string): Promise<string> {
  const headers = { Authorization: `Bearer ${apiKey}` };
  const jobId = await submitJob(apiKey);
  const canceled = await fetch(`${BASE_URL}/api/v1/jobs/${jobId}/cancel`, { method: "POST", headers });
  await canceled.arrayBuffer();
  return jobId;
}

interface Measurement {
  name: string;
  /** D1 statements one warm request runs (the Worker's D1-Queries header), or null when not reported. */
  d1Queries: number | null;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
}

async function measureOnce(target: Target, seconds: number): Promise<Measurement> {
  const result = await autocannon({ url: target.url, headers: target.headers, connections: CONNECTIONS, duration: seconds });
  return {
    name: target.name,
    d1Queries: null,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The endpoints take turns, ROUNDS times, and each figure is the median of its
 * rounds: on a shared machine, load from elsewhere then hits all of them alike.
 */
async function measureInterleaved(targets: Target[]): Promise<Measurement[]> {
  for (const target of targets) await measureOnce(target, WARMUP_SECONDS);
  const rounds: Measurement[][] = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [index, target] of targets.entries()) rounds[index]!.push(await measureOnce(target, DURATION_SECONDS));
  }
  return targets.map((target, index) => {
    const runs = rounds[index]!;
    return {
      name: target.name,
      d1Queries: null,
      requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
      p50Ms: median(runs.map((r) => r.p50Ms)),
      p99Ms: median(runs.map((r) => r.p99Ms)),
      non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
      errors: runs.reduce((sum, r) => sum + r.errors, 0),
    };
  });
}

/**
 * D1 statements a warm request to the target runs, from the D1-Queries header
 * the bench's own stack adds (D1_QUERY_COUNT=header). The last of a few requests counts:
 * the first ones warm the per-isolate key cache and the job's cached view.
 */
async function d1QueriesPerRequest(target: Target): Promise<number | null> {
  let header: string | null = null;
  for (let i = 0; i < 3; i += 1) {
    const response = await fetch(target.url, { headers: target.headers });
    await response.arrayBuffer();
    header = response.headers.get("D1-Queries");
  }
  return header === null ? null : Number(header);
}

function table(rows: Measurement[]): string {
  const header = `${"endpoint".padEnd(38)} ${"D1/req".padStart(6)} ${"req/s".padStart(8)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"non-2xx".padStart(8)} ${"errors".padStart(7)}`;
  const lines = rows.map(
    (r) =>
      `${r.name.padEnd(38)} ${(r.d1Queries === null ? "?" : String(r.d1Queries)).padStart(6)} ${r.requestsPerSecond.toFixed(0).padStart(8)} ${String(r.p50Ms).padStart(7)} ${String(r.p99Ms).padStart(7)} ${String(r.non2xx).padStart(8)} ${String(r.errors).padStart(7)}`,
  );
  return [header, ...lines].join("\n");
}

async function main(): Promise<number> {
  let stack: LocalStack | null = null;
  if (EXTERNAL_URL) {
    if (!(await healthy())) throw new Error(`no Worker answers at ${EXTERNAL_URL}`);
    process.stdout.write(`using the Worker at ${EXTERNAL_URL}\n`);
  } else {
    if (await healthy()) throw new Error(`port ${BENCH_PORT} is taken; set BENCH_PORT or CLIPJOBS_URL`);
    process.stdout.write(`starting the local stack without an engine on port ${BENCH_PORT} ...\n`);
    stack = await startBenchStack();
  }

  try {
    const token = stack?.adminToken ?? process.env.ADMIN_TOKEN ?? readDevVars().ADMIN_TOKEN;
    if (!token) throw new Error("ADMIN_TOKEN is not set (environment or .dev.vars)");
    const account = await new AdminClient(BASE_URL, token).createAccount(`bench-${Date.now()}@example.com`, "unmetered");
    const finishedJobId = await createFinishedJob(account.api_key);
    const activeJobId = await submitJob(account.api_key);
    const auth = { Authorization: `Bearer ${account.api_key}` };

    const loadAtStart = loadavg();
    process.stdout.write(`load average at start (1/5/15 min): ${loadAtStart.map((l) => l.toFixed(2)).join(" ")} on ${cpus().length} cores\n`);
    process.stdout.write(
      `${CONNECTIONS} connections; ${ROUNDS} interleaved rounds of ${DURATION_SECONDS} s per endpoint (after ${WARMUP_SECONDS} s warm-up); medians\n`,
    );
    const targets: Target[] = [
      { name: "GET /health", url: `${BASE_URL}/health`, headers: {} },
      { name: "GET /api/v1/jobs/:id active (auth)", url: `${BASE_URL}/api/v1/jobs/${activeJobId}`, headers: auth },
      { name: "GET /api/v1/jobs/:id finished (auth)", url: `${BASE_URL}/api/v1/jobs/${finishedJobId}`, headers: auth },
      { name: "GET /api/v1/video-types (auth)", url: `${BASE_URL}/api/v1/video-types`, headers: auth },
    ];
    const d1 = await Promise.all(targets.map((target) => d1QueriesPerRequest(target)));
    const rows = (await measureInterleaved(targets)).map((row, index) => ({ ...row, d1Queries: d1[index] ?? null }));
    const [health, active, finished] = rows as [Measurement, Measurement, Measurement, Measurement];
    const ratio = active.requestsPerSecond / health.requestsPerSecond;
    const finishedRatio = finished.requestsPerSecond / health.requestsPerSecond;
    const p99Ratio = Math.max(active.p99Ms, finished.p99Ms) / health.p99Ms;

    process.stdout.write("\n" + table(rows) + "\n\n");
    process.stdout.write(`load average at end (1/5/15 min): ${loadavg().map((l) => l.toFixed(2)).join(" ")} on ${cpus().length} cores\n`);
    process.stdout.write(`ratio authenticated job read / health: active ${ratio.toFixed(2)}, finished ${finishedRatio.toFixed(2)} (target >= 0.50: ${Math.min(ratio, finishedRatio) >= 0.5 ? "met" : "NOT met"}; aim 0.80)\n`);
    process.stdout.write(`p99 job read / health: ${p99Ratio.toFixed(2)} (target < 2: ${p99Ratio < 2 ? "met" : "NOT met"})\n`);
    const readQueries = [active.d1Queries, finished.d1Queries];
    process.stdout.write(`D1 queries per job read: active ${active.d1Queries ?? "?"}, warm finished ${finished.d1Queries ?? "?"} (target 0: ${readQueries.every((q) => q === 0) ? "met" : "NOT met"})\n`);

    const resultsDir = path.join(PROJECT_ROOT, "bench", "results");
    mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `api-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), connections: CONNECTIONS, seconds: DURATION_SECONDS, rounds: ROUNDS, loadAtStart, loadAverage: loadavg(), rows, ratio, finishedRatio, p99Ratio }, null, 2));
    process.stdout.write(`results written to ${path.relative(PROJECT_ROOT, file)}\n`);
    return rows.some((r) => r.non2xx > 0 || r.errors > 0) ? 1 : 0;
  } finally {
    await stack?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
