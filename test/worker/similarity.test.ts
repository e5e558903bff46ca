/**
 * POST /internal/v1/jobs/:id/similarity: the Worker's text
 * embedding route for a job's prompt. The AI binding is the bge-m3 stand-in
 * (the only fake), answering in the model's documented shape; paraphrases of
 * a topic score above unrelated sentences; model failures are retried and
 * then answered 502, no binding 503, and bad bodies 400, never a 5xx of our own.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { batches, EMBED_BATCH_CHARS, similarities } from "../../src/engine/embeddings.ts";
import { BgeM3StandIn } from "./bge-m3-stand-in.ts";
import { FakeEngine, type EngineClient } from "./engine-stub.ts";
import { createAccount, expectProblem } from "./helpers.ts";
import { startJob, VIDEO_URL } from "./jobs-helpers.ts";

/** The stand-in answers env.AI.run as the binding does (the stand-in file is shared with the engine's Node suites, which have no Ai type). */
function standInBinding(standIn: BgeM3StandIn): Ai {
  return standIn as unknown as Ai;
}

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

const SENTENCES = [
  "Our pricing starts at ten dollars a month.",
  "We hiked the northern ridge trail at sunrise.",
  "The subscription has a yearly discount.",
  "Add garlic to the sauce and let it simmer.",
];

async function send(client: EngineClient, ai: BgeM3StandIn | undefined | "local", body: unknown, token?: string): Promise<Response> {
  const request = new Request(client.url("similarity"), {
    method: "POST",
    headers: { Authorization: `Bearer ${token ?? client.token}`, "Content-Type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const bindings: Env = { ...env };
  if (ai === undefined) delete (bindings as Partial<Env>).AI;
  else if (ai !== "local") bindings.AI = standInBinding(ai);
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, bindings, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** A job with a prompt: only such a job's token carries the similarity scope (src/engine/scopes.ts). */
async function processingJob(prompt = "pricing"): Promise<EngineClient> {
  const client = await startJob(await createAccount("unmetered"), engine, { video_url: VIDEO_URL, video_type: "podcast", prompt });
  await client.probe({ duration_seconds: 120 });
  return client;
}

describe("POST /internal/v1/jobs/:id/similarity", () => {
  it("embeds the prompt and the sentences with bge-m3 in one call and ranks a paraphrase's topic first", async () => {
    const client = await processingJob("how much does it cost");
    const ai = new BgeM3StandIn();
    const res = await send(client, ai, { query: "how much does it cost", texts: SENTENCES });
    expect(res.status).toBe(200);
    const body = await res.json<{ model: string; similarities: number[] }>();
    expect(body.model).toBe("@cf/baai/bge-m3");
    expect(body.similarities).toHaveLength(4);
    const [pricing, hiking, subscription, cooking] = body.similarities as [number, number, number, number];
    expect(Math.min(pricing, subscription)).toBeGreaterThan(Math.max(hiking, cooking) + 0.3);
    expect(ai.calls).toHaveLength(1);
    expect(ai.calls[0]!.inputs).toEqual({ text: ["how much does it cost", ...SENTENCES], truncate_inputs: true });
  });

  it("retries a failing model, then answers 502 embedding_failed; the job stays processing", async () => {
    const client = await processingJob();
    const recovering = new BgeM3StandIn([{ kind: "throw", message: "3040: Capacity temporarily exceeded" }, { kind: "answer" }]);
    expect((await send(client, recovering, { query: "pricing", texts: SENTENCES })).status).toBe(200);
    expect(recovering.calls).toHaveLength(2);
    const failing = new BgeM3StandIn([{ kind: "throw", message: "3040: Capacity temporarily exceeded" }]);
    await expectProblem(await send(client, failing, { query: "pricing", texts: SENTENCES }), 502, "embedding_failed");
    expect(failing.calls).toHaveLength(3);
    const wrongShape = new BgeM3StandIn([{ kind: "raw", output: { shape: [1, 3], data: [[0.1, 0.2, 0.3]], pooling: "cls" } }]);
    await expectProblem(await send(client, wrongShape, { query: "pricing", texts: SENTENCES }), 502, "embedding_failed");
    expect((await client.progress({ progress: 40, step: "still here" })).status).toBe(200);
  });

  it("answers 503 embedding_unavailable without an AI binding or with the local placeholder", async () => {
    const client = await processingJob();
    await expectProblem(await send(client, undefined, { query: "pricing", texts: SENTENCES }), 503, "embedding_unavailable");
    await expectProblem(await send(client, "local", { query: "pricing", texts: SENTENCES }), 503, "embedding_unavailable");
  });

  it("embeds only the job's own prompt as the query: any other answers 403 ai_scope_exceeded and spends nothing", async () => {
    const client = await processingJob("pricing");
    const ai = new BgeM3StandIn();
    await expectProblem(await send(client, ai, { query: "something else entirely", texts: SENTENCES }), 403, "ai_scope_exceeded");
    expect(ai.calls).toHaveLength(0);
    expect((await send(client, ai, { query: "pricing", texts: SENTENCES })).status).toBe(200);
  });

  it("refuses bodies that are not the contract's, and callers without the job's token", async () => {
    const client = await processingJob();
    const ai = new BgeM3StandIn();
    for (const body of ["not json", { query: "", texts: SENTENCES }, { query: "x", texts: [] }, { query: "x", texts: Array(101).fill("a") }, { query: "x", texts: ["a".repeat(2001)] }]) {
      await expectProblem(await send(client, ai, body), 400, "invalid_request");
    }
    expect(ai.calls).toHaveLength(0);
    expect((await send(client, ai, { query: "x", texts: ["a"] }, "not-a-token-of-this-job-xx")).status).toBe(401);
  });

  it("splits long inputs into calls within the model's limits, in order", async () => {
    const long = Array.from({ length: 30 }, (_, i) => `${"word ".repeat(180)}${i}`);
    expect(batches(long).every((b) => b.reduce((n, t) => n + t.length, 0) <= EMBED_BATCH_CHARS)).toBe(true);
    const ai = new BgeM3StandIn();
    const result = await similarities(standInBinding(ai), "pricing", long);
    expect(ai.calls.length).toBeGreaterThan(1);
    expect(result.similarities).toHaveLength(30);
  });
});
