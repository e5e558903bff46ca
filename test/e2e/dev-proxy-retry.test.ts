/**
 * The local stack's clients and `wrangler dev`'s proxy answer for a forward
 * that failed on its connection (503 text/plain "Your worker restarted
 * mid-request..."): that request is sent again, a few times at most; every
 * other answer, a Worker's own 503 included, passes through untouched.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { AdminApiError, AdminClient } from "../../scripts/lib/admin-client.ts";
import { ApiClient } from "../../scripts/local-stack/api-client.ts";

const PROXY_TEXT = "Your worker restarted mid-request. Please try sending the request again. Only GET or HEAD requests are retried automatically.";

interface Seen {
  method: string;
  url: string;
  body: string;
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A server that answers each request with the next of `answers` (the last one repeats), recording what it got. */
async function serve(answers: ((res: ServerResponse) => void)[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") });
      answers[Math.min(seen.length, answers.length) - 1]!(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  close = () => new Promise((resolve) => server.close(() => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const proxyRestart = (res: ServerResponse) => res.writeHead(503, { "Content-Type": "text/plain;charset=UTF-8" }).end(PROXY_TEXT);
const created = (res: ServerResponse) =>
  res.writeHead(201, { "Content-Type": "application/json" }).end(JSON.stringify({ account_id: "acct_1", email: "a@example.test", plan: "pro", key_id: "key_1", api_key: "ck_1" }));
const workerBusy = (res: ServerResponse) =>
  res.writeHead(503, { "Content-Type": "application/problem+json" }).end(JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, code: "engine_unavailable", detail: "busy" }));

describe("clients of the local stack and wrangler dev's proxy", () => {
  test("the admin client sends a POST the proxy bounced again, with the same body, and gets the Worker's answer", async () => {
    const { url, seen } = await serve([proxyRestart, proxyRestart, created]);
    const account = await new AdminClient(url, "token").createAccount("a@example.test", "pro");
    expect(account.account_id).toBe("acct_1");
    expect(seen.map((s) => s.method)).toEqual(["POST", "POST", "POST"]);
    expect(new Set(seen.map((s) => s.body))).toEqual(new Set([JSON.stringify({ email: "a@example.test", plan: "pro" })]));
  });

  test("a proxy that keeps bouncing: after three tries the admin client reports the answer as it is", async () => {
    const { url, seen } = await serve([proxyRestart]);
    const error = await new AdminClient(url, "token").createAccount("a@example.test", "pro").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdminApiError);
    expect((error as AdminApiError).status).toBe(503);
    expect((error as AdminApiError).message).toContain("not JSON");
    expect(seen).toHaveLength(3);
  });

  test("a Worker's own 503 is not sent again", async () => {
    const { url, seen } = await serve([workerBusy, created]);
    const result = await new ApiClient(url, "ck_1").request("POST", "/api/v1/jobs", { body: { video_url: "https://example.test/a.mp4" } });
    expect(result.status).toBe(503);
    expect((result.body as { code: string }).code).toBe("engine_unavailable");
    expect(seen).toHaveLength(1);
  });

  test("the API client sends a bounced POST again and returns the Worker's answer", async () => {
    const { url, seen } = await serve([proxyRestart, created]);
    const result = await new ApiClient(url, "ck_1").request("POST", "/api/v1/jobs", { body: { video_url: "https://example.test/a.mp4" } });
    expect(result.status).toBe(201);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /api/v1/jobs", "POST /api/v1/jobs"]);
  });
});
