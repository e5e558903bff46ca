/**
 * `npm run bench:fleet:pool`: the cost of one AccountState call as the
 * number of Durable Objects built grows, with and without the pool
 * workaround (test/worker/pool-prototype-fix.ts), side by side in one run.
 * Without it, each object built wraps the pool's prototype in one more proxy
 * and calls slow down with the count (the run stops at 1,400 deep, before
 * the stack overflow the issue saw near 1,600); with it, calls stay flat up
 * to 3,000 objects.
 *
 * The setup file installs the workaround, so the first half runs with it;
 * the second half takes it out, and from then on each object built wraps the
 * prototype in one more proxy (starting from the one proxy the workaround
 * kept). The order matters: the workaround keeps the first prototype it sees
 * for a class, so with the pool as released first it would keep a chain
 * already as deep as the objects built. (The workaround's other half, each
 * object's first answer to the wrapper's instance lookup kept, stays on in
 * both halves: the chain is what this measures.)
 */
import { env } from "cloudflare:test";
import { it } from "vitest";
import { quantile } from "../../test/worker/fleet/simulation.ts";
import { installPoolPrototypeFix, uninstallPoolPrototypeFix } from "../../test/worker/pool-prototype-fix.ts";

async function callCost(name: string): Promise<number[]> {
  const stub = env.ACCOUNTS.get(env.ACCOUNTS.idFromName(name));
  await stub.activeJobs();
  const samples: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const start = performance.now();
    await stub.activeJobs();
    samples.push(performance.now() - start);
  }
  return samples;
}

it("keeps a Durable Object call flat as objects are built", async () => {
  const rows: string[] = [];
  const run = `pool-${crypto.randomUUID()}`;
  let built = 0;
  const buildTo = async (count: number) => {
    for (; built < count; built += 1) await env.ACCOUNTS.get(env.ACCOUNTS.idFromName(`${run}-${built}`)).activeJobs();
  };
  const measure = async (label: string, checkpoints: number[]) => {
    for (const count of checkpoints) {
      await buildTo(count);
      const samples = await callCost(`${run}-${count - 1}`);
      const row = `| ${label} | ${count.toLocaleString("en-US")} | ${quantile(samples, 0.5).toFixed(2)} | ${Math.max(...samples).toFixed(2)} |`;
      rows.push(row);
      console.log(row);
    }
  };
  await measure("with the workaround", [200, 1000, 2000, 3000]);
  uninstallPoolPrototypeFix();
  try {
    // Objects built from here on, each one proxy deeper: 200, 600, 1,000 and 1,400 deep.
    await measure("pool as released (chain = built - 3,000)", [3200, 3600, 4000, 4400]);
  } finally {
    installPoolPrototypeFix();
  }
  console.log(["", "One AccountState call on the newest object, ms (median / max of 20):", "| pool | objects built | median | max |", "|---|---|---|---|", ...rows].join("\n"));
}, 3_600_000);
