/**
 * `npm run bench:fleet:pool`: the cost of one AccountState call as the
 * number of Durable Objects built grows, with and without the pool
 * workaround (test/worker/pool-prototype-fix.ts), side by side in one run.
 * Without it, each object built wraps the pool's prototype in one more proxy
 * and calls slow down with the count (the run stops there at 1,400 objects,
 * before the stack overflow the issue saw near 1,600); with it, calls stay
 * flat up to 3,000 objects.
 *
 * The setup file installs the workaround; this file takes it out first and
 * puts it back for the second half (objects built from then on sit one proxy
 * deep again).
 */
import { env } from "cloudflare:test";
import { it } from "vitest";
import { quantile } from "../../test/worker/fleet/simulation";
import { installPoolPrototypeFix, uninstallPoolPrototypeFix } from "../../test/worker/pool-prototype-fix";

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
  uninstallPoolPrototypeFix();
  await measure("pool as released", [200, 600, 1000, 1400]);
  installPoolPrototypeFix();
  await measure("with the workaround", [1600, 2200, 3000]);
  console.log(["", "One AccountState call on the newest object, ms (median / max of 20):", "| pool | objects built | median | max |", "|---|---|---|---|", ...rows].join("\n"));
}, 3_600_000);
