/**
 * An account's life as a model (SPEC sections 2, 5, 7): fast-check generates
 * command sequences (submit, deliver, probe, complete, fail, cancel, delete,
 * grant credits, revoke the key, concurrent submissions) and runs each
 * against the real Worker (D1, R2, Queues, Durable Objects; only the engine
 * is the in-isolate fake) and a small in-test model side by side.
 * Invariants checked after every command: at most one active job; credits
 * never negative and remaining == plan + grants - charges - reservations;
 * a revoked key answers 401; every job that got its terminal command is in
 * a final state.
 */
import fc from "fast-check";
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { creditsForDuration } from "../../src/db/credits.ts";
import { clipReport, FakeEngine, waitFor } from "./engine-stub.ts";
import { adminFetch, api, createAccount, issueKey, type TestAccount } from "./helpers.ts";
import { deliver, VIDEO_URL } from "./jobs-helpers.ts";
import { EngineClient } from "./engine-stub.ts";
import { withDeadline } from "./fuzz/property.ts";

/** The unmetered plan's credits: large, so sources claiming months of video are what runs them out. */
const PLAN_CREDITS = 1_000_000;
const FINAL = new Set(["completed", "failed", "canceled"]);

interface ModelJob {
  id: string;
  status: "queued" | "processing" | "completed" | "failed" | "canceled";
  reserved: number;
  charged: number;
  client?: EngineClient;
}

interface Model {
  granted: number;
  used: number;
  reserved: number;
  jobs: Map<string, ModelJob>;
  active: string | null;
  revokedKeys: string[];
}

interface Real {
  account: TestAccount;
  engine: FakeEngine;
}

const counts = new Map<string, number>();
let sequences = 0;

function note(command: string): void {
  counts.set(command, (counts.get(command) ?? 0) + 1);
}

async function json<T>(res: Response): Promise<T> {
  return JSON.parse(await res.text()) as T;
}

/** The invariants, checked against the real service after every command. */
async function checkInvariants(model: Model, real: Real): Promise<void> {
  const usage = await json<{ credits_remaining: number; credits_granted: number; credits_used: number; credits_reserved: number }>(await api(real.account, "/api/v1/usage"));
  expect(usage.credits_remaining).toBeGreaterThanOrEqual(0);
  expect({ granted: usage.credits_granted, used: usage.credits_used, reserved: usage.credits_reserved }).toEqual({ granted: model.granted, used: model.used, reserved: model.reserved });
  expect(usage.credits_remaining).toBe(Math.max(0, PLAN_CREDITS + model.granted - model.used - model.reserved));
  const active = await env.DB.prepare(`SELECT id FROM jobs WHERE account_id = ? AND status IN ('queued', 'processing')`).bind(real.account.accountId).all<{ id: string }>();
  expect(active.results.map((r) => r.id)).toEqual(model.active === null ? [] : [model.active]);
  for (const job of model.jobs.values()) {
    const row = await env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(job.id).first<{ status: string }>();
    // The real queue may deliver a queued job at any moment: the model's "queued" allows "processing".
    if (job.status === "queued") expect(["queued", "processing"]).toContain(row?.status);
    else expect(row?.status).toBe(job.status);
  }
  for (const key of model.revokedKeys) expect((await api({ apiKey: key }, "/api/v1/usage")).status).toBe(401);
}

function activeJob(model: Model): ModelJob | null {
  return model.active === null ? null : model.jobs.get(model.active)!;
}

function finish(model: Model, job: ModelJob, status: ModelJob["status"], charge: boolean): void {
  if (charge) {
    model.used += job.reserved;
    job.charged = job.reserved;
  }
  model.reserved -= job.reserved;
  job.reserved = 0;
  job.status = status;
  model.active = null;
}

type Command = fc.AsyncCommand<Model, Real>;

class Submit implements Command {
  constructor(readonly concurrent: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    note(this.concurrent > 1 ? "concurrent submits" : "submit");
    const body = JSON.stringify({ video_url: VIDEO_URL, video_type: "podcast" });
    const responses = await Promise.all(Array.from({ length: this.concurrent }, () => api(real.account, "/api/v1/jobs", { method: "POST", body })));
    const bodies = await Promise.all(responses.map((res) => json<{ job_id?: string; code?: string; active_job_id?: string }>(res)));
    const created = responses.map((res, i) => ({ status: res.status, body: bodies[i]! })).filter((r) => r.status === 201);
    const remaining = PLAN_CREDITS + model.granted - model.used - model.reserved;
    if (model.active !== null || remaining <= 0) {
      expect(created).toEqual([]);
      // Credits are checked before the slot.
      for (const [i, res] of responses.entries()) expect(res.status, JSON.stringify(bodies[i])).toBe(remaining <= 0 ? 402 : 409);
    } else {
      expect(created).toHaveLength(1);
      const id = created[0]!.body.job_id!;
      for (const [i, res] of responses.entries()) if (res.status !== 201) expect(bodies[i]!.active_job_id).toBe(id);
      model.jobs.set(id, { id, status: "queued", reserved: 0, charged: 0 });
      model.active = id;
    }
    await checkInvariants(model, real);
  }
  toString = () => `submit x${this.concurrent}`;
}

/** Delivers the queue message (again, if the real queue already did: delivery is at least once). */
async function deliverJob(model: Model, real: Real, job: ModelJob): Promise<void> {
  note("deliver");
  await deliver(real.account, job.id);
  // The queue's own delivery may be the one that starts it, a moment later.
  job.client = EngineClient.from(await waitFor(() => real.engine.starts(job.id).at(-1), `a StartJob for ${job.id}`));
  job.status = "processing";
}

class Deliver implements Command {
  check = (model: Model) => model.active !== null;
  async run(model: Model, real: Real): Promise<void> {
    await deliverJob(model, real, activeJob(model)!);
    await checkInvariants(model, real);
  }
  toString = () => "deliver";
}

class Probe implements Command {
  constructor(readonly durationSeconds: number) {}
  check = (model: Model) => model.active !== null && activeJob(model)!.reserved === 0;
  async run(model: Model, real: Real): Promise<void> {
    note("probe");
    const job = activeJob(model)!;
    if (job.status === "queued") await deliverJob(model, real, job);
    const ack = await job.client!.probe({ duration_seconds: this.durationSeconds });
    const needed = creditsForDuration(this.durationSeconds);
    if (PLAN_CREDITS + model.granted - model.used - model.reserved >= needed) {
      expect(ack).toMatchObject({ proceed: true, credits_reserved: needed });
      job.reserved = needed;
      model.reserved += needed;
    } else {
      expect(ack).toMatchObject({ proceed: false, error: { code: "insufficient_credits" } });
      finish(model, job, "failed", false);
    }
    await checkInvariants(model, real);
  }
  toString = () => `probe ${this.durationSeconds}s`;
}

class Complete implements Command {
  check = (model: Model) => activeJob(model)?.status === "processing" && activeJob(model)!.reserved > 0;
  async run(model: Model, real: Real): Promise<void> {
    note("complete");
    const job = activeJob(model)!;
    await job.client!.uploadClip(0, 512);
    const res = await job.client!.complete({ title: "Model", source_duration_seconds: 60, clips: [clipReport(0)] });
    expect(res.status).toBe(200);
    finish(model, job, "completed", true);
    await checkInvariants(model, real);
  }
  toString = () => "complete";
}

class Fail implements Command {
  check = (model: Model) => model.active !== null;
  async run(model: Model, real: Real): Promise<void> {
    note("fail");
    const job = activeJob(model)!;
    if (job.status === "queued") await deliverJob(model, real, job);
    expect((await job.client!.fail({ code: "no_clips_found", message: "nothing stood out" })).status).toBe(200);
    finish(model, job, "failed", false);
    await checkInvariants(model, real);
  }
  toString = () => "fail";
}

class Cancel implements Command {
  check = (model: Model) => model.active !== null;
  async run(model: Model, real: Real): Promise<void> {
    note("cancel");
    const job = activeJob(model)!;
    expect((await api(real.account, `/api/v1/jobs/${job.id}/cancel`, { method: "POST" })).status).toBe(200);
    finish(model, job, "canceled", false);
    // A callback after the cancel is refused and writes nothing.
    if (job.client) expect((await job.client.progress({ progress: 50, step: "late" })).status).toBe(409);
    await checkInvariants(model, real);
  }
  toString = () => "cancel";
}

class Delete implements Command {
  check = (model: Model) => [...model.jobs.values()].some((job) => FINAL.has(job.status));
  async run(model: Model, real: Real): Promise<void> {
    note("delete");
    const job = [...model.jobs.values()].find((j) => FINAL.has(j.status))!;
    expect((await api(real.account, `/api/v1/jobs/${job.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await env.UPLOADS.list({ prefix: `staging/${job.id}/` })).objects).toEqual([]);
    model.jobs.delete(job.id);
    await checkInvariants(model, real);
  }
  toString = () => "delete";
}

class Grant implements Command {
  constructor(readonly credits: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    note("grant credits");
    const res = await adminFetch(`/admin/v1/accounts/${real.account.accountId}/credits`, { method: "POST", body: JSON.stringify({ credits: this.credits }) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    model.granted += this.credits;
    await checkInvariants(model, real);
  }
  toString = () => `grant ${this.credits}`;
}

class RevokeKey implements Command {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    note("revoke key");
    const res = await adminFetch(`/admin/v1/keys/${real.account.keyId}/revoke`, { method: "POST" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    model.revokedKeys.push(real.account.apiKey);
    const next = await issueKey(real.account.accountId, "rotated");
    real.account = { ...real.account, apiKey: next.apiKey, keyId: next.keyId };
    await checkInvariants(model, real);
  }
  toString = () => "revoke key";
}

/** The job lifecycle commands appear several times, so sequences mostly move jobs along rather than idle. */
const lifecycle = [
  fc.constant(new Deliver()),
  // Up to about 9.5 months of claimed video: a few of them exhaust the plan's credits.
  fc.integer({ min: 1, max: 25_000_000 }).map((seconds) => new Probe(seconds)),
  fc.constant(new Complete()),
];
const commands = [
  fc.integer({ min: 1, max: 4 }).map((n) => new Submit(n)),
  fc.integer({ min: 1, max: 4 }).map((n) => new Submit(n)),
  ...lifecycle,
  ...lifecycle,
  ...lifecycle,
  fc.constant(new Fail()),
  fc.constant(new Cancel()),
  fc.constant(new Delete()),
  fc.integer({ min: 1, max: 300_000 }).map((credits) => new Grant(credits)),
  fc.constant(new RevokeKey()),
];

let engine: FakeEngine;
beforeAll(() => {
  engine = new FakeEngine();
  engine.install();
});

afterAll(() => {
  const lines = [...counts].map(([command, n]) => `${command.padEnd(18)} ${String(n).padStart(5)}`);
  console.log([`\nmodel: ${sequences} generated command sequences (command, times run)`, ...lines].join("\n"));
});

describe("an account's life, against a model", () => {
  it("keeps one active job, exact credits and revocations across generated command sequences", async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 30, size: "large" }), async (cmds) => {
        sequences += 1;
        const account = await createAccount("unmetered");
        const model: Model = { granted: 0, used: 0, reserved: 0, jobs: new Map(), active: null, revokedKeys: [] };
        const real: Real = { account, engine };
        await withDeadline(fc.asyncModelRun(() => ({ model, real }), cmds), 600_000, () => `sequence did not finish: ${String(cmds)}`);
        // No job is left stuck: ending the active one, every job is final.
        const last = activeJob(model);
        if (last) await new Cancel().run(model, real);
        const open = await env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ? AND status IN ('queued', 'processing')`).bind(real.account.accountId).first<{ n: number }>();
        expect(open?.n).toBe(0);
      }),
      { numRuns: 20, endOnFailure: true },
    );
  }, 900_000);
});
