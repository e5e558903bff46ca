/**
 * Webhooks on the real local stack: a receiver on loopback checks every
 * delivery with the `standardwebhooks` package (a verifier no one on this
 * project wrote). The shared stack runs with WEBHOOK_RETRY_SCALE=0.001, so
 * the retry schedule's first gaps take well under a second.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { pollUntil } from "../../scripts/local-stack/poll.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { newAccount, type TestAccount } from "./harness/accounts.ts";
import { TALK_20S, talkSource } from "./harness/media.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

// Budgets for a stuck run, not speed targets: on a loaded machine each queue hop can take many seconds.
const TEST_TIMEOUT = { timeout: 600_000 };

interface Received {
  path: string;
  at: number;
  id: string;
  verified: boolean;
  payload: { type: string; timestamp: string; data: Record<string, unknown> } | null;
  /** When the Worker closed the connection (hung requests only). */
  closedAt?: number;
}

type Behaviour = number | "hang";

/** One loopback HTTP server; each endpoint path has its secret and a script of answers. */
class Receiver {
  readonly received: Received[] = [];
  private readonly secrets = new Map<string, string>();
  private readonly scripts = new Map<string, Behaviour[]>();
  private readonly hung: ServerResponse[] = [];
  private server!: Server;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  register(path: string, secret: string, script: Behaviour[] = []): void {
    this.secrets.set(path, secret);
    this.scripts.set(path, script);
  }

  for(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Stamped on arrival, not once the body is read and verified: the Worker's attempt timer started before
    // the request was sent, so every moment spent here before the stamp would shorten the hold measured below.
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const path = req.url ?? "";
    const secret = this.secrets.get(path);
    let payload: Received["payload"] = null;
    let verified = false;
    if (secret) {
      try {
        const headers = {
          "webhook-id": String(req.headers["webhook-id"]),
          "webhook-timestamp": String(req.headers["webhook-timestamp"]),
          "webhook-signature": String(req.headers["webhook-signature"]),
        };
        payload = new Webhook(secret).verify(body, headers) as Received["payload"];
        verified = true;
      } catch {
        verified = false;
      }
    }
    const entry: Received = { path, at, id: String(req.headers["webhook-id"]), verified, payload };
    this.received.push(entry);
    const behaviour = this.scripts.get(path)?.shift() ?? 200;
    if (behaviour === "hang") {
      res.on("close", () => (entry.closedAt = Date.now()));
      this.hung.push(res);
      return;
    }
    res.writeHead(behaviour, { "Content-Type": "text/plain" }).end("ok");
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let stack: SharedStackInfo;
let receiver: Receiver;
let sources: SourceServer;
let talkUrl: string;

beforeAll(async () => {
  receiver = new Receiver();
  const [info, server, talk] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_20S), receiver.start()]);
  stack = info;
  sources = server;
  talkUrl = sources.addFile("webhook-talk.mp4", talk.path);
});

afterAll(async () => {
  await receiver?.close();
  await sources?.close();
});

interface WebhookView {
  webhook_id: string;
  secret?: string;
  enabled: boolean;
  disabled_reason: string | null;
}

interface DeliveryView {
  event_id: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  latency_ms: number | null;
}

async function createEndpoint(account: TestAccount, script: Behaviour[] = [], events: string[] | "*" = "*"): Promise<{ hook: WebhookView; path: string }> {
  const path = `/hooks/${Math.random().toString(36).slice(2)}`;
  const result = await account.client.request("POST", "/api/v1/webhooks", { body: { url: `${receiver.url}${path}`, events } });
  expect(result.status).toBe(201);
  const hook = result.body as WebhookView;
  receiver.register(path, hook.secret!, script);
  return { hook, path };
}

async function sendTest(account: TestAccount, webhookId: string): Promise<DeliveryView> {
  const result = await account.client.request("POST", `/api/v1/webhooks/${webhookId}/test`);
  expect(result.status).toBe(202);
  return result.body as DeliveryView;
}

async function deliveries(account: TestAccount, webhookId: string): Promise<DeliveryView[]> {
  const result = await account.client.request("GET", `/api/v1/webhooks/${webhookId}/deliveries`);
  expect(result.status).toBe(200);
  return (result.body as { deliveries: DeliveryView[] }).deliveries;
}

function settle<T>(probe: () => Promise<T | undefined>, description: string, timeoutMs = 300_000): Promise<T> {
  return pollUntil(probe, { timeoutMs, intervalMs: 250, description });
}

describe("webhooks end to end", TEST_TIMEOUT, () => {
  test("a job's whole life arrives in order, every delivery verified by standardwebhooks", async () => {
    const account = await newAccount(stack);
    const { path } = await createEndpoint(account);
    const submitted = await account.client.submit({ video_url: talkUrl, video_type: "podcast" });
    const job = await account.client.waitForJob(submitted.job_id, { timeoutMs: 180_000 });
    expect(job.status).toBe("completed");
    const arrived = await settle(async () => {
      const forJob = receiver.for(path).filter((r) => r.payload?.data.job_id === submitted.job_id);
      return forJob.some((r) => r.payload?.type === "job.completed") ? forJob : undefined;
    }, "the job.completed webhook");
    expect(receiver.for(path).every((r) => r.verified)).toBe(true);
    expect(arrived.map((r) => r.payload!.type)).toEqual(["job.queued", "job.processing", "job.completed"]);
    const stamps = arrived.map((r) => Date.parse(r.payload!.timestamp));
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    expect(new Set(arrived.map((r) => r.id)).size).toBe(3);
    expect(arrived[2]!.payload!.data).toEqual(await account.client.getJob(submitted.job_id));
  });

  test("a receiver failing with 500 three times, then 200, gets the event once per attempt, then no more", async () => {
    const account = await newAccount(stack);
    const { hook, path } = await createEndpoint(account, [500, 500, 500, 200]);
    const queued = await sendTest(account, hook.webhook_id);
    const done = await settle(async () => {
      const [latest] = await deliveries(account, hook.webhook_id);
      return latest?.status === "succeeded" ? latest : undefined;
    }, "the fourth attempt");
    expect(done).toMatchObject({ attempts: 4, last_status_code: 200 });
    // Nothing more arrives afterwards.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const got = receiver.for(path);
    expect(got).toHaveLength(4);
    expect(got.every((r) => r.verified && r.id === queued.event_id)).toBe(true);
    expect(got.every((r) => r.payload?.type === "webhook.test")).toBe(true);
  });

  test("a 410 disables the endpoint at once", async () => {
    const account = await newAccount(stack);
    const { hook, path } = await createEndpoint(account, [410]);
    await sendTest(account, hook.webhook_id);
    const disabled = await settle(async () => {
      const result = await account.client.request("GET", `/api/v1/webhooks/${hook.webhook_id}`);
      const view = result.body as WebhookView;
      return view.enabled ? undefined : view;
    }, "the endpoint disabled");
    expect(disabled.disabled_reason).toBe("gone");
    expect(receiver.for(path)).toHaveLength(1);
    const refused = await account.client.request("POST", `/api/v1/webhooks/${hook.webhook_id}/test`);
    expect(refused.status).toBe(409);
    expect((refused.body as { code: string }).code).toBe("webhook_disabled");
  });

  test("a receiver that hangs is cut at the 15-second timeout", async () => {
    const account = await newAccount(stack);
    const { hook, path } = await createEndpoint(account, ["hang", 200]);
    const queued = await sendTest(account, hook.webhook_id);
    const hung = await settle(async () => receiver.for(path).find((r) => r.closedAt !== undefined), "the hung request closed", 60_000);
    const heldMs = hung.closedAt! - hung.at;
    // Held for the attempt's timeout, not cut early. The Worker's 15 s timer starts before the request is sent, and
    // how late a loaded machine delivers it to the receiver has no bound, so the exact 15 s is the Workers pool's
    // to show (webhooks-delivery: the attempt itself, timed from its start); here the hold is most of it.
    expect(heldMs).toBeGreaterThanOrEqual(10_000);
    // Cut, not left hanging (the receiver never answers): well under the 60 s this waits, with room for a loaded machine.
    expect(heldMs).toBeLessThan(30_000);
    const done = await settle(async () => {
      const [latest] = await deliveries(account, hook.webhook_id);
      return latest?.status === "succeeded" ? latest : undefined;
    }, "the retry after the timeout");
    expect(done.attempts).toBe(2);
    expect(receiver.for(path).map((r) => r.id)).toEqual([queued.event_id, queued.event_id]);
  });
});
