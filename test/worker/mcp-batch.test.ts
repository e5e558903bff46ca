/**
 * A JSON-RPC batch on /mcp spends the request window per message (src/mcp/routes.ts):
 * a batch of n tool calls counts n requests, the window grants what it has
 * room for, and no more tool calls than that run; the rest answer
 * rate_limited. Sent raw, as a 2025-era client sends a batch.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ok, problem, TOOL_NAMES, type ToolAnswer } from "../e2e/harness/mcp-answers.ts";
import { api, BASE, createAccount, expectProblem, type TestAccount } from "./helpers.ts";

interface RpcAnswer {
  id: number | string | null;
  result?: ToolAnswer & { tools?: unknown[] };
  error?: { code: number; message: string };
}

function postMcp(account: TestAccount, body: unknown): Promise<Response> {
  return SELF.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${account.apiKey}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC answers of a response, whether sent as JSON or as server-sent events. */
async function answersOf(res: Response): Promise<RpcAnswer[]> {
  const text = await res.text();
  if ((res.headers.get("Content-Type") ?? "").startsWith("application/json")) {
    const parsed = JSON.parse(text) as RpcAnswer | RpcAnswer[];
    return Array.isArray(parsed) ? parsed : [parsed];
  }
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line.length > "data: ".length)
    .map((line) => JSON.parse(line.slice("data: ".length)) as RpcAnswer)
    .filter((answer) => answer.id !== undefined);
}

function toolCalls(count: number, name = "get_usage"): unknown[] {
  return Array.from({ length: count }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name, arguments: {} } }));
}

/** Splits a batch's tool answers into those that ran and those the window refused. */
function tally(answers: RpcAnswer[]): { served: number; refused: number } {
  let served = 0;
  let refused = 0;
  for (const answer of answers) {
    const result = answer.result!;
    if (result.isError) {
      problem(result, "rate_limited");
      refused += 1;
    } else {
      expect(ok(result)).toMatchObject({ plan: "free" });
      served += 1;
    }
  }
  return { served, refused };
}

/** Requests the account's window has counted (the Durable Object's own figure). */
async function remaining(account: TestAccount): Promise<number> {
  const res = await api(account, "/api/v1/usage");
  await res.body?.cancel();
  // This read counted one more.
  return Number(/r=(\d+)/.exec(res.headers.get("RateLimit") ?? "")![1]) + 1;
}

describe("/mcp: a JSON-RPC batch spends the request window per message", { timeout: 60_000 }, () => {
  it("a batch of 100 tool calls on the free plan (60 a minute) runs 60 of them; the other 40 answer rate_limited", async () => {
    const account = await createAccount("free");
    const res = await postMcp(account, toolCalls(100));
    expect(res.status).toBe(200);
    expect(res.headers.get("RateLimit")).toMatch(/^"default";r=0;t=\d+$/);
    const answers = await answersOf(res);
    expect(answers.map((answer) => answer.id).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(tally(answers)).toEqual({ served: 60, refused: 40 });
    const refusal = problem(answers.find((answer) => answer.result!.isError)!.result!, "rate_limited");
    expect(refusal.retry_after_seconds).toBeGreaterThan(0);
    expect(refusal.detail).toContain("this batch counts 100 requests and the window had room for 60");
    // The window is spent for REST too.
    await expectProblem(await api(account, "/api/v1/usage"), 429, "rate_limited");
  });

  it("serves at most what is left of the window: 50 spent, a batch of 100 runs 10", async () => {
    const account = await createAccount("free");
    for (let i = 0; i < 50; i += 1) {
      const res = await api(account, "/api/v1/usage");
      await res.body?.cancel();
      expect(res.status).toBe(200);
    }
    expect(tally(await answersOf(await postMcp(account, toolCalls(100))))).toEqual({ served: 10, refused: 90 });
    // A batch on a full window runs nothing.
    expect(tally(await answersOf(await postMcp(account, toolCalls(5))))).toEqual({ served: 0, refused: 5 });
  });

  it("counts the requests of a batch, not its notifications; protocol requests are answered and counted", async () => {
    const account = await createAccount("free");
    const batch = [
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: "list", method: "tools/list" },
      ...toolCalls(3),
    ];
    const res = await postMcp(account, batch);
    expect(res.status).toBe(200);
    expect(res.headers.get("RateLimit")).toMatch(/^"default";r=56;/);
    const answers = await answersOf(res);
    expect(answers.find((answer) => answer.id === "list")!.result!.tools).toHaveLength(TOOL_NAMES.length);
    expect(tally(answers.filter((answer) => answer.id !== "list"))).toEqual({ served: 3, refused: 0 });
    expect(await remaining(account)).toBe(56);
  });

  it("a batch larger than the server serves (100) is refused before any work and counts once", async () => {
    const account = await createAccount("free");
    const res = await postMcp(account, toolCalls(101));
    expect(res.status).toBe(400);
    expect(res.headers.get("RateLimit")).toMatch(/^"default";r=59;/);
    const [answer] = await answersOf(res);
    expect(answer!.error!.code).toBe(-32600);
    expect(await remaining(account)).toBe(59);
  });
});
