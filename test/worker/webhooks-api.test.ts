/**
 * /api/v1/webhooks: management, bad input (a documented 400, nothing
 * stored), cross-account isolation, and the job events the transitions emit.
 */
import { env, SELF } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_WEBHOOKS_PER_ACCOUNT } from "../../src/webhooks/schemas.ts";
import { findJob } from "../../src/db/jobs.ts";
import { dispatchJobEvents, jobEventStatement } from "../../src/jobs/outbox.ts";
import { clipReport, expectAck, FakeEngine } from "./engine-stub.ts";
import { checkResponse, type Operation } from "./fuzz/oracle.ts";
import { ORIGIN, send } from "./fuzz/invoke.ts";
import { api, BASE, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { getJob, startJob } from "./jobs-helpers.ts";
import { apiWith, createWebhook, envWith, FakeReceiver, RECEIVER_ORIGIN, RecordingQueue, type WebhookJson } from "./webhooks-helpers.ts";

let queue: RecordingQueue;
let receiver: FakeReceiver;
beforeEach(() => {
  queue = new RecordingQueue();
  receiver = new FakeReceiver();
  receiver.install();
});
afterEach(() => receiver.uninstall());

async function endpointCount(accountId: string): Promise<number> {
  const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM webhook_endpoints WHERE account_id = ?`).bind(accountId).first<{ n: number }>();
  return row?.n ?? 0;
}

function post(account: TestAccount, body: unknown): Promise<Response> {
  return api(account, "/api/v1/webhooks", { method: "POST", body: JSON.stringify(body) });
}

describe("managing endpoints", () => {
  it("creates, lists, reads, changes and deletes an endpoint; the secret is shown once", async () => {
    const account = await createAccount();
    const created = await createWebhook(account, { events: ["job.completed", "job.failed", "job.completed"], description: "prod" });
    expect(created).toMatchObject({ enabled: true, events: ["job.completed", "job.failed"], description: "prod", disabled_reason: null });
    expect(created.webhook_id).toMatch(/^wh_[A-Za-z0-9]+$/);
    expect(created.secret).toMatch(/^whsec_/);

    const list = await (await api(account, "/api/v1/webhooks")).json<{ webhooks: WebhookJson[]; count: number }>();
    expect(list.count).toBe(1);
    expect(list.webhooks[0]).not.toHaveProperty("secret");

    const patched = await api(account, `/api/v1/webhooks/${created.webhook_id}`, {
      method: "PATCH",
      body: JSON.stringify({ events: "*", url: `${RECEIVER_ORIGIN}/v2`, enabled: false }),
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ events: "*", url: `${RECEIVER_ORIGIN}/v2`, enabled: false, disabled_reason: null });

    expect((await api(account, `/api/v1/webhooks/${created.webhook_id}`, { method: "DELETE" })).status).toBe(204);
    await expectProblem(await api(account, `/api/v1/webhooks/${created.webhook_id}`), 404, "not_found");
    expect(await endpointCount(account.accountId)).toBe(0);
  });

  it("events default to all", async () => {
    const account = await createAccount();
    expect((await createWebhook(account)).events).toBe("*");
  });
});

describe("bad input: a documented 400, nothing stored", () => {
  const badUrls: [string, string][] = [
    ["not a url", "invalid_webhook_url"],
    ["ftp://receiver.example.com/x", "invalid_webhook_url"],
    ["http://receiver.example.com/plain-http", "invalid_webhook_url"],
    ["https://user:pw@receiver.example.com/x", "invalid_webhook_url"],
    ["https://127.0.0.1/hook", "invalid_webhook_url"],
    ["https://localhost/hook", "invalid_webhook_url"],
    ["https://[::1]/hook", "invalid_webhook_url"],
    ["https://10.1.2.3/hook", "invalid_webhook_url"],
    ["https://169.254.169.254/latest/meta-data", "invalid_webhook_url"],
    ["https://metadata.google.internal/x", "invalid_webhook_url"],
    ["https://2130706433/x", "invalid_webhook_url"],
    [`https://receiver.example.com/${"a".repeat(2100)}`, "invalid_webhook_url"],
  ];
  it.each(badUrls.map(([url, code]) => [url.length > 80 ? `${url.slice(0, 60)}... (${url.length} characters)` : url, url, code]))("url %s", async (_label, url, code) => {
    const account = await createAccount();
    const problem = await expectProblem(await post(account, { url }), 400, code);
    expect(problem.errors?.[0]?.path).toBe("url");
    expect(await endpointCount(account.accountId)).toBe(0);
  });

  it("unknown or empty event lists are invalid_webhook_event", async () => {
    const account = await createAccount();
    for (const events of [["job.exploded"], [], "all", ["webhook.test"], [42]]) {
      const problem = await expectProblem(await post(account, { url: `${RECEIVER_ORIGIN}/x`, events }), 400, "invalid_webhook_event");
      expect(problem.errors?.some((e) => e.path.startsWith("events"))).toBe(true);
    }
    expect(await endpointCount(account.accountId)).toBe(0);
  });

  it("oversize descriptions, missing url, wrong types and missing bodies are invalid_request", async () => {
    const account = await createAccount();
    const problem = await expectProblem(await post(account, { url: `${RECEIVER_ORIGIN}/x`, description: "d".repeat(501) }), 400, "invalid_request");
    expect(problem.errors?.[0]?.path).toBe("description");
    await expectProblem(await post(account, { description: "no url" }), 400, "invalid_webhook_url");
    await expectProblem(await post(account, { url: `${RECEIVER_ORIGIN}/x`, enabled: "yes" }), 400, "invalid_request");
    await expectProblem(await api(account, "/api/v1/webhooks", { method: "POST" }), 400, "invalid_request");
    await expectProblem(await api(account, "/api/v1/webhooks", { method: "POST", body: "{" }), 400, "invalid_request");
    expect(await endpointCount(account.accountId)).toBe(0);
    const hook = await createWebhook(account);
    await expectProblem(await api(account, `/api/v1/webhooks/${hook.webhook_id}`, { method: "PATCH", body: "{}" }), 400, "invalid_request");
    await expectProblem(
      await api(account, `/api/v1/webhooks/${hook.webhook_id}`, { method: "PATCH", body: JSON.stringify({ url: "https://192.168.1.1/x" }) }),
      400,
      "invalid_webhook_url",
    );
    expect((await api(account, `/api/v1/webhooks/${hook.webhook_id}`)).status).toBe(200);
    expect((await (await api(account, `/api/v1/webhooks/${hook.webhook_id}`)).json<WebhookJson>()).url).toBe(hook.url);
    await expectProblem(await api(account, `/api/v1/webhooks/${hook.webhook_id}/deliveries?cursor=bogus`), 400, "invalid_request");
    await expectProblem(await api(account, `/api/v1/webhooks/${hook.webhook_id}/deliveries?limit=0`), 400, "invalid_request");
  });

  it(`the ${MAX_WEBHOOKS_PER_ACCOUNT + 1}th endpoint is webhook_limit_reached, even when requested at once`, async () => {
    const account = await createAccount("unmetered");
    const results = await Promise.all(Array.from({ length: MAX_WEBHOOKS_PER_ACCOUNT + 3 }, (_, i) => post(account, { url: `${RECEIVER_ORIGIN}/${i}` })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_WEBHOOKS_PER_ACCOUNT);
    for (const res of results.filter((r) => r.status !== 201)) await expectProblem(res, 400, "webhook_limit_reached");
    expect(await endpointCount(account.accountId)).toBe(MAX_WEBHOOKS_PER_ACCOUNT);
  });

  it("http and private destinations are allowed only with ALLOW_PRIVATE_SOURCES (local development)", async () => {
    const account = await createAccount();
    const res = await apiWith(queue, account, "/api/v1/webhooks", { method: "POST", body: JSON.stringify({ url: "http://127.0.0.1:9/hook" }) });
    await expectProblem(res, 400, "invalid_webhook_url");
    const { app } = await import("../../src/app.ts");
    const local = await app.fetch(
      new Request(`${BASE}/api/v1/webhooks`, {
        method: "POST",
        headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ url: "http://127.0.0.1:9/hook" }),
      }),
      envWith(queue, { ALLOW_PRIVATE_SOURCES: "true" }),
    );
    expect(local.status).toBe(201);
  });
});

describe("isolation", () => {
  it("another account can neither see, change, test nor delete an endpoint", async () => {
    const owner = await createAccount();
    const stranger = await createAccount();
    const hook = await createWebhook(owner);
    const id = hook.webhook_id;
    await expectProblem(await api(stranger, `/api/v1/webhooks/${id}`), 404, "not_found");
    await expectProblem(await api(stranger, `/api/v1/webhooks/${id}`, { method: "PATCH", body: JSON.stringify({ enabled: false }) }), 404, "not_found");
    await expectProblem(await api(stranger, `/api/v1/webhooks/${id}`, { method: "DELETE" }), 404, "not_found");
    await expectProblem(await api(stranger, `/api/v1/webhooks/${id}/rotate-secret`, { method: "POST" }), 404, "not_found");
    await expectProblem(await apiWith(queue, stranger, `/api/v1/webhooks/${id}/test`, { method: "POST" }), 404, "not_found");
    await expectProblem(await api(stranger, `/api/v1/webhooks/${id}/deliveries`), 404, "not_found");
    expect((await (await api(stranger, "/api/v1/webhooks")).json<{ count: number }>()).count).toBe(0);
    expect(await (await api(owner, `/api/v1/webhooks/${id}`)).json()).toMatchObject({ enabled: true, url: hook.url });
  });

  it("an account's job events go only to its own subscribed endpoints", async () => {
    const a = await createAccount();
    const b = await createAccount();
    const aAll = await createWebhook(a);
    const aFailedOnly = await createWebhook(a, { events: ["job.failed"] });
    const bAll = await createWebhook(b);
    const submitted = await api(a, "/api/v1/jobs", { method: "POST", body: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "podcast" }) });
    expect(submitted.status).toBe(201);
    const jobId = (await submitted.json<{ job_id: string }>()).job_id;
    const targetsOf = async () => {
      const rows = await env.DB.prepare(`SELECT endpoint_id, event_type FROM webhook_deliveries WHERE endpoint_id IN (?, ?, ?)`)
        .bind(aAll.webhook_id, aFailedOnly.webhook_id, bAll.webhook_id)
        .all<{ endpoint_id: string; event_type: string }>();
      return rows.results;
    };
    const targets = await targetsOf();
    expect(targets.filter((t) => t.event_type === "job.queued").map((t) => t.endpoint_id)).toEqual([aAll.webhook_id]);
    // An event claimed for account B about A's job (even with the job's own transition id) finds no job of B's: nothing is written or sent.
    const before = (await targetsOf()).length;
    const job = (await findJob(env.DB, jobId))!;
    const row = await env.DB.prepare(`SELECT transition_id FROM jobs WHERE id = ?`).bind(jobId).first<{ transition_id: string }>();
    const forged = jobEventStatement(envWith(queue), { id: row!.transition_id, type: "job.queued", job: { ...job, accountId: b.accountId }, at: job.createdAt });
    expect((await forged.run()).meta.changes).toBe(0);
    await dispatchJobEvents(envWith(queue), jobId);
    expect(await targetsOf()).toHaveLength(before);
    expect(queue.sent).toHaveLength(0);
  });
});

describe("job events", () => {
  let engine: FakeEngine;
  beforeEach(() => {
    // In front of the receiver: requests to the engine go to the engine fake, the rest pass on.
    engine = new FakeEngine();
    engine.install();
  });

  interface StoredEvent {
    id: string;
    type: string;
    body: string;
  }

  async function eventsFor(webhookId: string): Promise<StoredEvent[]> {
    const { results } = await env.DB.prepare(
      `SELECT e.id, e.type, e.body FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = ? ORDER BY e.created_at, d.rowid`,
    )
      .bind(webhookId)
      .all<StoredEvent>();
    return results;
  }

  it("a job's life produces queued, processing and completed, the last carrying the job as GET shows it", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    const client = await startJob(account, engine);
    await client.probe({ duration_seconds: 30 });
    await client.uploadClip(0);
    await expectAck(await client.complete({ title: "Talk", source_duration_seconds: 30, clips: [clipReport(0)] }));
    const events = await eventsFor(hook.webhook_id);
    expect(events.map((e) => e.type)).toEqual(["job.queued", "job.processing", "job.completed"]);
    for (const event of events) {
      const body = JSON.parse(event.body) as { type: string; timestamp: string; data: { job_id: string } };
      expect(body.type).toBe(event.type);
      expect(body.data.job_id).toBe(client.jobId);
    }
    const completed = JSON.parse(events[2]!.body) as { timestamp: string; data: unknown };
    const job = await getJob(account, client.jobId);
    expect(completed.data).toEqual(job);
    // Timestamps are the transitions' own times, so they order the events even if one is emitted late.
    expect((JSON.parse(events[0]!.body) as { timestamp: string }).timestamp).toBe(job.created_at);
    expect(completed.timestamp).toBe(job.completed_at);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
  });

  it("a failed job's event carries its error; a canceled job's event says canceled", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account, { events: ["job.failed", "job.canceled"] });
    const failing = await startJob(account, engine);
    await expectAck(await failing.fail({ code: "source_unreachable", message: "The source could not be downloaded." }));
    const canceled = await startJob(account, engine);
    expect((await api(account, `/api/v1/jobs/${canceled.jobId}/cancel`, { method: "POST" })).status).toBe(200);
    const events = await eventsFor(hook.webhook_id);
    expect(events.map((e) => e.type)).toEqual(["job.failed", "job.canceled"]);
    const failed = JSON.parse(events[0]!.body) as { data: { status: string; error: { code: string } } };
    expect(failed.data).toMatchObject({ status: "failed", error: { code: "source_unreachable" } });
    expect((JSON.parse(events[1]!.body) as { data: { status: string } }).data.status).toBe("canceled");
  });

  it("a dispatch that cannot reach its database never breaks the transition (the sweep dispatches later)", async () => {
    const broken = { ...env, DB: { prepare: () => { throw new Error("D1 down"); } } as unknown as D1Database };
    await expect(dispatchJobEvents(broken, "job_x")).resolves.toBeUndefined();
  });

});

describe("wiring", () => {
  it("events reach the receiver through the real queue (index.ts routes the webhooks queue)", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    const res = await SELF.fetch(`${BASE}/api/v1/webhooks/${hook.webhook_id}/test`, { method: "POST", headers: { Authorization: `Bearer ${account.apiKey}` } });
    expect(res.status).toBe(202);
    const deadline = Date.now() + 45_000; // A budget for a stuck run: the queue delivers late on a loaded machine.
    while (!receiver.requests.some((r) => r.url === hook.url) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(receiver.requests.filter((r) => r.url === hook.url)).toHaveLength(1);
  });
});

describe("the served OpenAPI document", () => {
  it("lists every status the webhooks routes answer, and every body matches its schema", async () => {
    const account = await createAccount("unmetered");
    const auth = { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" };
    const call = async (method: string, path: string, template: string, body?: unknown) => {
      const res = await send(new Request(`${ORIGIN}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) }));
      return { res, body: await checkResponse(res, { method: method.toLowerCase() as Operation["method"], path: template }) };
    };
    const root = "/api/v1/webhooks";
    const one = `${root}/{webhook_id}`;
    expect((await call("GET", root, root)).res.status).toBe(200);
    const created = await call("POST", root, root, { url: `${RECEIVER_ORIGIN}/doc`, events: ["job.completed"], description: "d" });
    expect(created.res.status).toBe(201);
    const id = (created.body as WebhookJson).webhook_id;
    for (const bad of [{ url: "https://10.0.0.1/x" }, { url: `${RECEIVER_ORIGIN}/x`, events: ["nope"] }, { url: `${RECEIVER_ORIGIN}/x`, description: "x".repeat(600) }, {}]) {
      expect((await call("POST", root, root, bad)).res.status).toBe(400);
    }
    expect((await call("GET", `${root}/${id}`, one)).res.status).toBe(200);
    expect((await call("GET", `${root}/wh_missing`, one)).res.status).toBe(404);
    expect((await call("PATCH", `${root}/${id}`, one, { description: "changed" })).res.status).toBe(200);
    expect((await call("PATCH", `${root}/${id}`, one, { events: [] })).res.status).toBe(400);
    expect((await call("POST", `${root}/${id}/rotate-secret`, `${one}/rotate-secret`)).res.status).toBe(200);
    const tested = await call("POST", `${root}/${id}/test`, `${one}/test`);
    expect(tested.res.status).toBe(202);
    const deliveryId = (tested.body as { delivery_id: string }).delivery_id;
    const page = await call("GET", `${root}/${id}/deliveries?limit=1`, `${one}/deliveries`);
    expect(page.res.status).toBe(200);
    const redeliverPath = `${one}/deliveries/{delivery_id}/redeliver`;
    expect((await call("POST", `${root}/${id}/deliveries/${deliveryId}/redeliver`, redeliverPath)).res.status).toBe(202);
    expect((await call("POST", `${root}/${id}/deliveries/whd_missing/redeliver`, redeliverPath)).res.status).toBe(404);
    expect((await call("PATCH", `${root}/${id}`, one, { enabled: false })).res.status).toBe(200);
    expect((await call("POST", `${root}/${id}/test`, `${one}/test`)).res.status).toBe(409);
    expect((await call("DELETE", `${root}/${id}`, one)).res.status).toBe(204);
    expect((await call("DELETE", `${root}/${id}`, one)).res.status).toBe(404);
  });
});
