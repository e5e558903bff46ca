/**
 * `npm run bench:d1`: D1 writes per job, counted on the real local stack
 * (the Worker under `wrangler dev` with the D1_QUERY_COUNT switch, the real
 * engine and ffmpeg). A short and a longer source run one after the other
 * with the same one-clip configuration; the longer one sends many more
 * engine reports (progress and heartbeats), which live in the account's
 * Durable Object, so its D1 writes must be the same.
 *
 * The Worker's `D1-Totals` header (src/http/d1-query-header.ts) holds the
 * isolate's running totals, requests, waitUntil work, queue batches and the
 * watchdog alike, with the written tables named; the figures are the
 * difference across each job. `api_keys` writes are the key's last_used_at
 * hint (at most one a minute per key while the client polls), a cost of the
 * client's activity rather than of the job, and are shown apart.
 *
 * The engine sends its heartbeat every BENCH_D1_HEARTBEAT_SECONDS (default
 * 0.25, production 2) so that, in a run of a minute, the longer job sends
 * many times the reports of the short one. Source lengths:
 * BENCH_D1_SHORT_SECONDS (default 20, 640x360) and BENCH_D1_LONG_SECONDS
 * (default 600, 1280x720 at 30 fps with grain, so that it takes a while).
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { loadavg } from "node:os";
import { AdminClient } from "../../scripts/lib/admin-client.ts";
import { ApiClient } from "../../scripts/local-stack/api-client.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { cachedMedia, type MediaSpec } from "../../test/media/generate.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const SHORT_SECONDS = Number(process.env.BENCH_D1_SHORT_SECONDS ?? 20);
const LONG_SECONDS = Number(process.env.BENCH_D1_LONG_SECONDS ?? 600);
const HEARTBEAT_SECONDS = process.env.BENCH_D1_HEARTBEAT_SECONDS ?? "0.25";
/** One clip for both, so the clip rows (one per clip) do not differ either. */
const ONE_CLIP = { max_clips: 1, min_clip_seconds: 5, max_clip_seconds: 10, resolution: 720 } as const;
const JOB_TIMEOUT_MS = 15 * 60_000;
/** Time for work a transition left to waitUntil (webhook emits, key hints) to land before the totals are read. */
const SETTLE_MS = 1500;

interface Totals {
  queries: number;
  writes: number;
  writesByTable: Record<string, number>;
  engineCallbacks: number;
}

function talk(durationSeconds: number, seed: number, size: Pick<MediaSpec, "width" | "height" | "fps" | "grain">): MediaSpec {
  const bursts = [0.3, 0.6].map((f) => Math.round(durationSeconds * f));
  const sceneChanges = [0.2, 0.45, 0.7].map((f) => Math.round(durationSeconds * f));
  return { durationSeconds, ...size, bursts, sceneChanges, seed };
}

async function totalsOf(workerUrl: string): Promise<Totals> {
  const response = await fetch(`${workerUrl}/health`);
  await response.arrayBuffer();
  const header = response.headers.get("D1-Totals");
  if (!header) throw new Error("the Worker sends no D1-Totals header: is D1_QUERY_COUNT=header set?");
  return JSON.parse(header) as Totals;
}

function difference(after: Totals, before: Totals): Totals {
  const tables = new Set([...Object.keys(after.writesByTable), ...Object.keys(before.writesByTable)]);
  const writesByTable: Record<string, number> = {};
  for (const table of [...tables].sort()) {
    const n = (after.writesByTable[table] ?? 0) - (before.writesByTable[table] ?? 0);
    if (n !== 0) writesByTable[table] = n;
  }
  return {
    queries: after.queries - before.queries,
    writes: after.writes - before.writes,
    writesByTable,
    engineCallbacks: after.engineCallbacks - before.engineCallbacks,
  };
}

interface JobFigures {
  label: string;
  sourceSeconds: number;
  status: string;
  clips: number;
  seconds: number;
  cost: Totals;
}

async function runJob(stack: LocalStack, client: ApiClient, label: string, url: string, sourceSeconds: number): Promise<JobFigures> {
  const before = await totalsOf(stack.workerUrl);
  const started = Date.now();
  const submitted = await client.submit({ video_url: url, video_type: "podcast", config_name: "one-clip" });
  const job = await client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS, intervalMs: 2000 });
  const seconds = (Date.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const cost = difference(await totalsOf(stack.workerUrl), before);
  return { label, sourceSeconds, status: job.status, clips: Number(job.clips_count ?? 0), seconds, cost };
}

function withoutKeyHints(cost: Totals): number {
  return cost.writes - (cost.writesByTable.api_keys ?? 0);
}

function print(rows: JobFigures[]): void {
  console.log(
    `\nD1 writes per job (local stack, engine heartbeat ${HEARTBEAT_SECONDS} s, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")})`,
  );
  console.log("job    source  status     clips  time(s)  engine callbacks  D1 writes (job)  api_keys hints  D1 queries  writes by table");
  for (const row of rows) {
    const tables = Object.entries(row.cost.writesByTable)
      .map(([table, n]) => `${table} ${n}`)
      .join(", ");
    console.log(
      `${row.label.padEnd(6)} ${`${row.sourceSeconds}s`.padStart(6)}  ${row.status.padEnd(9)}  ${String(row.clips).padStart(5)}  ` +
        `${row.seconds.toFixed(1).padStart(7)}  ${String(row.cost.engineCallbacks).padStart(16)}  ${String(withoutKeyHints(row.cost)).padStart(15)}  ` +
        `${String(row.cost.writesByTable.api_keys ?? 0).padStart(14)}  ${String(row.cost.queries).padStart(10)}  ${tables}`,
    );
  }
  const [short, long] = rows;
  if (short && long) {
    const same = withoutKeyHints(short.cost) === withoutKeyHints(long.cost);
    console.log(
      `\n${same ? "Same" : "DIFFERENT"} D1 writes per job: ${withoutKeyHints(short.cost)} with ${short.cost.engineCallbacks} engine callbacks, ` +
        `${withoutKeyHints(long.cost)} with ${long.cost.engineCallbacks}.`,
    );
    if (!same) process.exitCode = 1;
  }
}

async function main(): Promise<void> {
  const [shortSource, longSource] = await Promise.all([
    cachedMedia(talk(SHORT_SECONDS, 31, { width: 640, height: 360, fps: 15 }), join(ROOT, ".tmp", "bench", "media")),
    cachedMedia(talk(LONG_SECONDS, 37, { width: 1280, height: 720, fps: 30, grain: 10 }), join(ROOT, ".tmp", "bench", "media")),
  ]);
  let stack: LocalStack | null = null;
  let sources: SourceServer | null = null;
  try {
    [stack, sources] = await Promise.all([
      startLocalStack({
        root: ROOT,
        dir: join(ROOT, ".tmp", "bench", "d1-stack"),
        fresh: true,
        ephemeral: true,
        vars: { D1_QUERY_COUNT: "header" },
        engineEnv: { PROGRESS_HEARTBEAT_SECONDS: HEARTBEAT_SECONDS },
      }),
      startSourceServer(),
    ]);
    const email = `bench-d1-${randomBytes(4).toString("hex")}@example.test`;
    const account = await new AdminClient(stack.workerUrl, stack.adminToken).createAccount(email, "pro");
    const client = new ApiClient(stack.workerUrl, account.api_key);
    const saved = await client.request("PUT", "/api/v1/configs/one-clip", { body: ONE_CLIP });
    if (saved.status !== 200 && saved.status !== 201) throw new Error(`saving the configuration answered ${saved.status}`);
    const rows = [
      await runJob(stack, client, "short", sources.addFile("short.mp4", shortSource.path), SHORT_SECONDS),
      await runJob(stack, client, "long", sources.addFile("long.mp4", longSource.path), LONG_SECONDS),
    ];
    print(rows);
    for (const row of rows) {
      if (row.status !== "completed") {
        console.error(`the ${row.label} job ended ${row.status}; logs in ${stack.logsDir}`);
        process.exitCode = 1;
      }
    }
  } finally {
    await Promise.all([stack?.stop(), sources?.close()]);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
