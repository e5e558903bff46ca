/**
 * `npm run bench:load`: a bounded load run on loopback against the local
 * stack (the Worker under `wrangler dev`), several accounts at once: five on
 * the free plan and one unmetered, each driven by its own autocannon with a
 * fixed number of requests (so it stops by itself). Checks that every free
 * account gets exactly its 60 requests per window and a documented 429 for
 * the rest, that the unmetered one is never limited, and that nothing else
 * fails; prints latency percentiles. Exit code 1 when a check fails.
 *
 * BENCH_FREE_ACCOUNTS (5), BENCH_REQUESTS (100 per free account),
 * BENCH_UNMETERED_REQUESTS (600), BENCH_CONNECTIONS (10 per account).
 */
import { join } from "node:path";
import autocannon from "autocannon";
import { AdminClient } from "../../scripts/lib/admin-client.ts";
import { startLocalStack } from "../../scripts/local-stack/stack.ts";
import { PROJECT_ROOT } from "../../scripts/local-stack/paths.ts";

const FREE_ACCOUNTS = Number(process.env.BENCH_FREE_ACCOUNTS ?? 5);
const FREE_REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const UNMETERED_REQUESTS = Number(process.env.BENCH_UNMETERED_REQUESTS ?? 600);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** The free plan's window (SPEC section 5); the whole run must fit in one window for exact counts. */
const FREE_LIMIT = 60;

interface Row {
  account: string;
  plan: string;
  requests: number;
  statuses: Record<string, number>;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  ok: boolean;
  why: string;
}

/** The parts of autocannon's result this run reads (bench/api/autocannon.d.ts types the rest). */
interface LoadResult {
  requests: { total: number };
  latency: { p50: number; p90: number; p99: number };
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}

async function drive(workerUrl: string, apiKey: string, amount: number): Promise<LoadResult> {
  // `amount` bounds the run by request count, so it stops by itself.
  const options = {
    url: `${workerUrl}/api/v1/usage`,
    connections: CONNECTIONS,
    amount,
    timeout: 30,
    headers: { Authorization: `Bearer ${apiKey}` },
  };
  return (await autocannon(options)) as unknown as LoadResult;
}

function judge(plan: string, amount: number, result: LoadResult): { ok: boolean; why: string; statuses: Record<string, number> } {
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, stat]) => [code, stat.count]));
  const passed = statuses["200"] ?? 0;
  const limited = statuses["429"] ?? 0;
  const other = Object.entries(statuses).filter(([code]) => code !== "200" && code !== "429");
  if (result.errors > 0 || result.timeouts > 0) return { ok: false, why: `${result.errors} errors, ${result.timeouts} timeouts`, statuses };
  if (other.length > 0) return { ok: false, why: `undocumented statuses ${JSON.stringify(Object.fromEntries(other))}`, statuses };
  if (plan === "free" && (passed !== Math.min(FREE_LIMIT, amount) || limited !== Math.max(0, amount - FREE_LIMIT))) {
    return { ok: false, why: `expected ${Math.min(FREE_LIMIT, amount)}/${Math.max(0, amount - FREE_LIMIT)} (200/429)`, statuses };
  }
  if (plan === "unmetered" && passed !== amount) return { ok: false, why: "the unmetered account was limited", statuses };
  return { ok: true, why: "", statuses };
}

async function main(): Promise<void> {
  const stack = await startLocalStack({
    root: PROJECT_ROOT,
    dir: join(PROJECT_ROOT, ".tmp", "bench", `load-${Date.now()}`),
    fresh: true,
    ephemeral: true,
  });
  let failed = false;
  try {
    const admin = new AdminClient(stack.workerUrl, stack.adminToken);
    const plans = [...Array.from({ length: FREE_ACCOUNTS }, () => "free"), "unmetered"];
    const accounts = await Promise.all(plans.map((plan, i) => admin.createAccount(`load-${Date.now()}-${i}@example.test`, plan)));
    const started = Date.now();
    const results = await Promise.all(
      accounts.map((account, i) => drive(stack.workerUrl, account.api_key, plans[i] === "free" ? FREE_REQUESTS : UNMETERED_REQUESTS)),
    );
    const seconds = (Date.now() - started) / 1000;
    const rows: Row[] = results.map((result, i) => {
      const plan = plans[i]!;
      const amount = plan === "free" ? FREE_REQUESTS : UNMETERED_REQUESTS;
      const verdict = judge(plan, amount, result);
      return {
        account: `#${i + 1}`,
        plan,
        requests: result.requests.total,
        statuses: verdict.statuses,
        errors: result.errors,
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        ok: verdict.ok,
        why: verdict.why,
      };
    });
    console.log(`\nbench:load: ${accounts.length} accounts at once, ${CONNECTIONS} connections each, ${seconds.toFixed(1)} s`);
    console.table(rows.map((row) => ({ ...row, statuses: JSON.stringify(row.statuses) })));
    failed = rows.some((row) => !row.ok);
    // Exact counts need the whole run inside one 60 s window.
    if (seconds >= 60) {
      console.error("the run took longer than the 60 s window; the counts are not comparable");
      failed = true;
    }
  } finally {
    await stack.stop();
  }
  if (failed) {
    console.error("bench:load: a check failed");
    process.exit(1);
  }
}

await main();
