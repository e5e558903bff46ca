/**
 * Operators see the fleet: GET /admin/v1/fleet (ADMIN_TOKEN) and the
 * dashboard's fleet page (the token typed into a form), on a fleet of the
 * test's own with a job running, one waiting, an instance still stopping and
 * a failure in the last hour.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import type { FleetOverview } from "../../src/fleet/overview.ts";
import { fleetTime } from "../../src/fleet/time.ts";
import { expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { callback, deliverWith, privateFleet, recordingQueue, submitWith } from "./fleet/harness.ts";
import { BASE, createAccount, expectProblem } from "./helpers.ts";

const wallClock = fleetTime.now;
afterEach(() => {
  fleetTime.now = wallClock;
});

/** One engine, one job running on it, one waiting, one failed a moment ago. */
async function busyFleet() {
  const engine = new FakeEngine();
  engine.install();
  const testEnv: Env = { ...env, ENGINE_MAX_INSTANCES: "1", JOBS: recordingQueue().queue, FLEET: privateFleet() };
  const [a, b, c] = [await createAccount(), await createAccount(), await createAccount()];
  const failing = await submitWith(testEnv, c);
  await deliverWith(testEnv, c, failing);
  const start = await waitFor(() => engine.starts(failing)[0], "StartJob");
  await expectAck(await callback(testEnv, failing, start.token, "fail", { code: "source_unreachable", message: "gone" }));
  const running = await submitWith(testEnv, a);
  await deliverWith(testEnv, a, running);
  const waiting = await submitWith(testEnv, b);
  await deliverWith(testEnv, b, waiting);
  return testEnv;
}

function get(testEnv: Env, path: string, init: RequestInit = {}): Promise<Response> {
  return Promise.resolve(app.fetch(new Request(`${BASE}${path}`, init), testEnv, createExecutionContext()));
}

describe("GET /admin/v1/fleet", () => {
  it("needs the admin token", async () => {
    await expectProblem(await get(env, "/admin/v1/fleet"), 401, "unauthorized");
  });

  it("shows running, waiting and starting engines, the oldest wait, grants per minute and failures by code", async () => {
    const testEnv = await busyFleet();
    const later = Date.now() + 60_000;
    fleetTime.now = () => later;
    const res = await get(testEnv, "/admin/v1/fleet", { headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    const fleet = await res.json<FleetOverview>();
    expect(fleet).toMatchObject({ capacity: 1, running: 1, starting: 0, waiting: 1, free: 0, stopping: 0 });
    expect(fleet.oldest_wait_seconds).toBeGreaterThanOrEqual(59);
    // Two grants (the failed job's, then the running one's) in the minute before `later`.
    expect(fleet.grants_last_minute).toBe(2);
    expect(fleet.starts_last_hour).toBe(2);
    expect(fleet.job_failures_last_hour.source_unreachable).toBeGreaterThanOrEqual(1);
    expect(fleet.settings).toMatchObject({ engine_max_instances: 1, instance_vcpu: 4, start_budget_seconds: 1800 });
  });
});

describe("the dashboard's fleet page", () => {
  const post = (testEnv: Env, token: string) =>
    get(testEnv, "/dashboard/fleet", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: BASE },
      body: new URLSearchParams({ admin_token: token }).toString(),
    });

  it("asks for the admin token and refuses any other", async () => {
    const form = await get(env, "/dashboard/fleet");
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('name="admin_token"');
    const wrong = await post(env, `${env.ADMIN_TOKEN}x`);
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain('data-fleet="running"');
  });

  it("shows the fleet for the admin token, without echoing it", async () => {
    const testEnv = await busyFleet();
    const res = await post(testEnv, env.ADMIN_TOKEN);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<dd data-fleet="running">1</dd>');
    expect(html).toContain('<dd data-fleet="waiting">1</dd>');
    expect(html).toContain('<td data-count="source_unreachable">');
    expect(html).not.toContain(env.ADMIN_TOKEN);
  });
});
