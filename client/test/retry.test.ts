/**
 * The retry layer on its own, over a scripted transport (the real API cannot
 * be made to answer 503 on demand; the e2e CLI test covers the real thing).
 * Delays are recorded, not slept.
 */
import { createServer, type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ClipjobsClient } from "../src/client.ts";
import { ClipjobsError } from "../src/errors.ts";
import { retryAfterMs, retryingFetch } from "../src/retry.ts";

function problem(status: number, code: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ type: `/docs/errors#${code}`, title: code, status, detail: `${code} happened`, code, request_id: "req_1" }), {
    status,
    headers: { "Content-Type": "application/problem+json", ...headers },
  });
}

/** A transport answering from a script, recording each request it was sent. */
function scripted(answers: Response[]) {
  const seen: { method: string; url: string; headers: Headers; body: string }[] = [];
  const transport = async (request: Request): Promise<Response> => {
    seen.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
    const next = answers.shift();
    if (!next) throw new Error("transport called more often than scripted");
    return next;
  };
  return { seen, transport };
}

const QUEUED = { job_id: "job_abc", status: "queued", message: "Job queued.", created_at: "2026-01-01T00:00:00Z" };

describe("retryAfterMs", () => {
  it("reads seconds and HTTP dates, and nothing else", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:10 GMT", Date.parse("2026-01-01T00:00:00Z"))).toBe(10_000);
    expect(retryAfterMs(null)).toBeNull();
    expect(retryAfterMs("soon")).toBeNull();
  });
});

describe("retryingFetch", () => {
  it("waits Retry-After on 429 and 503, then returns the success; the body is sent again each time", async () => {
    const { seen, transport } = scripted([problem(429, "rate_limited", { "Retry-After": "2" }), problem(503, "service_unavailable"), new Response("ok")]);
    const waits: number[] = [];
    const fetcher = retryingFetch(transport, { sleep: async (ms) => void waits.push(ms) });
    const response = await fetcher(new Request("http://api.test/x", { method: "POST", body: "payload" }));
    expect(await response.text()).toBe("ok");
    expect(waits).toEqual([2000, 2000]); // 503 without Retry-After: the fallback for the 2nd retry
    expect(seen.map((s) => s.body)).toEqual(["payload", "payload", "payload"]);
  });

  it("gives up after maxRetries, or when Retry-After is longer than maxWaitMs, returning the last answer", async () => {
    const many = scripted([problem(503, "service_unavailable"), problem(503, "service_unavailable"), problem(503, "service_unavailable")]);
    const limited = await retryingFetch(many.transport, { maxRetries: 2, sleep: async () => {} })(new Request("http://api.test/x"));
    expect(limited.status).toBe(503);
    expect(many.seen).toHaveLength(3);

    const long = scripted([problem(429, "rate_limited", { "Retry-After": "3600" })]);
    const waited: number[] = [];
    const refused = await retryingFetch(long.transport, { maxWaitMs: 60_000, sleep: async (ms) => void waited.push(ms) })(new Request("http://api.test/x"));
    expect(refused.status).toBe(429);
    expect(waited).toEqual([]);
  });

  it("does not retry other failures", async () => {
    const { seen, transport } = scripted([problem(409, "conflict")]);
    expect((await retryingFetch(transport)(new Request("http://api.test/x"))).status).toBe(409);
    expect(seen).toHaveLength(1);
  });
});

describe("ClipjobsClient", () => {
  it("sends one Idempotency-Key per submission, the same on every retry, and the bearer key", async () => {
    const { seen, transport } = scripted([
      problem(429, "rate_limited", { "Retry-After": "0" }),
      new Response(JSON.stringify(QUEUED), { status: 201, headers: { "Content-Type": "application/json" } }),
      new Response(JSON.stringify(QUEUED), { status: 201, headers: { "Content-Type": "application/json" } }),
    ]);
    const client = new ClipjobsClient({ baseUrl: "http://api.test", apiKey: "ck_live_x", fetch: transport });
    await client.submitJob({ video_url: "https://example.com/v.mp4", video_type: "podcast" });
    await client.submitJob({ video_url: "https://example.com/v.mp4", video_type: "podcast" }, { idempotencyKey: "mine" });
    const keys = seen.map((s) => s.headers.get("Idempotency-Key"));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toBe("mine");
    expect(seen.every((s) => s.headers.get("Authorization") === "Bearer ck_live_x")).toBe(true);
    expect(JSON.parse(seen[0]!.body)).toEqual({ video_url: "https://example.com/v.mp4", video_type: "podcast" });
  });

  it("turns a problem into a ClipjobsError with its code and detail, and a refused connection into network_error", async () => {
    const { transport } = scripted([problem(404, "not_found")]);
    const error = await new ClipjobsClient({ baseUrl: "http://api.test", fetch: transport }).getJob("job_x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClipjobsError);
    expect(error).toMatchObject({ code: "not_found", detail: "not_found happened", status: 404 });

    // A port nothing listens on: the connection is refused.
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const offline = await new ClipjobsClient({ baseUrl: `http://127.0.0.1:${closed}` }).usage().catch((e: unknown) => e);
    expect(offline).toMatchObject({ code: "network_error" });
    expect((offline as Error).message).toContain("ECONNREFUSED");
  });
});
