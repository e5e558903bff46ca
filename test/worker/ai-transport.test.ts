/**
 * The one Workers AI transport (src/ai): the binding where there is one, the
 * REST API where an account id and token are configured. The REST side runs
 * against the REST stand-in (test/stand-ins/workers-ai-rest.ts), which
 * answers the documented envelope and failures; everything behind the
 * engine-channel route (token, job state, D1, Durable Objects) is real.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CHUNK_START_HEADER, TranscribeResult } from "#contract";
import { aiRunner, aiTransportKind } from "../../src/ai/runner.ts";
import { WorkersAiError } from "../../src/ai/errors.ts";
import { runUrl } from "../../src/ai/rest.ts";
import { transcribeChunk, TranscriptionFailed } from "../../src/engine/whisper.ts";
import { similarities } from "../../src/engine/embeddings.ts";
import { translateTexts } from "../../src/engine/translate.ts";
import worker from "../../src/index.ts";
import { FAILURES, WHISPER, WorkersAiRestStandIn } from "../stand-ins/workers-ai-rest.ts";
import { FakeEngine } from "./engine-stub.ts";
import { createAccount } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";
import { makeWav, WhisperStandIn } from "./whisper-stand-in.ts";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
const TOKEN = "test-workers-ai-token";
const BASE = "http://workers-ai.test/client/v4";
const REST = { WORKERS_AI_ACCOUNT_ID: ACCOUNT, WORKERS_AI_TOKEN: TOKEN, WORKERS_AI_BASE_URL: BASE };
const FAST = { attempts: 3, baseDelayMs: 1, attemptTimeoutMs: 2_000, budgetMs: 5_000 };

function standIn(script = "welcome back everyone"): WorkersAiRestStandIn {
  return new WorkersAiRestStandIn({ accountId: ACCOUNT, token: TOKEN, script });
}

describe("choosing the transport", () => {
  it("takes the REST API when an account id and a token are set, else the binding, else none", () => {
    const binding = new WhisperStandIn([]).binding<Ai>();
    expect(aiTransportKind({ AI: binding, ...REST })).toBe("rest");
    expect(aiTransportKind({ AI: binding, WORKERS_AI_ACCOUNT_ID: ACCOUNT, WORKERS_AI_TOKEN: "" })).toBe("binding");
    expect(aiTransportKind({ AI: binding, WORKERS_AI_ACCOUNT_ID: " ", WORKERS_AI_TOKEN: TOKEN })).toBe("binding");
    expect(aiTransportKind({})).toBe("none");
    expect(aiRunner({})).toBeUndefined();
  });

  it("defaults the base to Cloudflare's API and keeps each part of the model name a path segment", () => {
    expect(runUrl("https://api.cloudflare.com/client/v4/", "abc", WHISPER)).toBe(
      "https://api.cloudflare.com/client/v4/accounts/abc/ai/run/@cf/openai/whisper-large-v3-turbo",
    );
  });
});

describe("the REST transport", () => {
  it("posts the model's JSON input with the bearer token and answers the envelope's result", async () => {
    const api = standIn();
    const runner = aiRunner(REST, api.fetch)!;
    const wav = makeWav(3);
    const result = await transcribeChunk(runner, wav, 60, 3, FAST, "en");
    expect(api.requests).toHaveLength(1);
    const [request] = api.requests;
    expect(request).toMatchObject({ model: WHISPER, accountId: ACCOUNT, authorization: `Bearer ${TOKEN}`, status: 200 });
    // whisper-large-v3-turbo takes its audio as a base64 string in the JSON body.
    const input = request!.input as { audio: string; language: string };
    expect(input.language).toBe("en");
    expect(Uint8Array.from(atob(input.audio), (c) => c.charCodeAt(0))).toEqual(wav);
    expect(result.words.map((w) => w.text)).toEqual(["welcome", "back", "everyone"]);
    expect(result.words[0]!.start).toBeGreaterThanOrEqual(60);
    expect(result.words.at(-1)!.end).toBeLessThanOrEqual(63);
  });

  it("serves translation and embeddings through the same transport", async () => {
    const api = standIn();
    const runner = aiRunner(REST, api.fetch)!;
    const translated = await translateTexts(runner, { source_language: "en", target_language: "fr", texts: ["Hello there."] }, FAST);
    expect(translated.texts).toEqual(["[fr] Hello there."]);
    const similar = await similarities(runner, "how much does it cost", ["our pricing plans", "a hike up the mountain"], FAST);
    expect(similar.similarities[0]!).toBeGreaterThan(similar.similarities[1]!);
    expect(api.requests.map((r) => r.model)).toEqual(["@cf/meta/m2m100-1.2b", "@cf/baai/bge-m3"]);
  });

  it("throws the API's status and errors for a refused token, and does not retry it", async () => {
    const api = standIn();
    const runner = aiRunner({ ...REST, WORKERS_AI_TOKEN: "wrong" }, api.fetch)!;
    const error = await runner.run(WHISPER, { audio: "AAAA" }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(WorkersAiError);
    expect(error).toMatchObject({ status: 401, errors: [{ code: 10000, message: "Authentication error" }], retryable: false });
    await expect(transcribeChunk(runner, makeWav(1), 0, 1, FAST)).rejects.toBeInstanceOf(TranscriptionFailed);
    expect(api.requests).toHaveLength(2);
  });

  it("retries a 429 (3040 out of capacity) and a 5xx, then answers", async () => {
    const api = standIn("one two");
    api.failNext(FAILURES.rateLimited);
    api.failNext(FAILURES.internal);
    const result = await transcribeChunk(aiRunner(REST, api.fetch)!, makeWav(1), 0, 1, FAST);
    expect(api.requests.map((r) => r.status)).toEqual([429, 500, 200]);
    expect(result.words.map((w) => w.text)).toEqual(["one", "two"]);
  });

  it("gives up after the policy's attempts on a lasting 429, naming the API's error", async () => {
    const api = standIn();
    api.failNext(FAILURES.dailyLimit, 5);
    const error = await transcribeChunk(aiRunner(REST, api.fetch)!, makeWav(1), 0, 1, FAST).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TranscriptionFailed);
    expect((error as Error).message).toContain("3036: Account limited");
    expect(api.requests).toHaveLength(3);
  });

  it("treats success:false, an unknown model and a body that is not the envelope as failures", async () => {
    const api = standIn();
    const runner = aiRunner(REST, api.fetch)!;
    api.failNext({ status: 200, errors: [], body: JSON.stringify({ result: null, success: false, errors: [{ code: 3007, message: "Request timeout" }], messages: [] }) });
    await expect(runner.run(WHISPER, { audio: "AAAA" })).rejects.toMatchObject({ status: 502, message: "3007: Request timeout", retryable: true });
    await expect(runner.run("@cf/nobody/nothing", { text: "x" })).rejects.toMatchObject({ status: 400, errors: [{ code: 5007 }], retryable: false });
    api.failNext({ status: 502, errors: [], body: "<html>bad gateway</html>" });
    await expect(runner.run(WHISPER, { audio: "AAAA" })).rejects.toMatchObject({ status: 502, message: "Workers AI answered HTTP 502" });
    api.failNext({ status: 200, errors: [], body: "not json" });
    await expect(runner.run(WHISPER, { audio: "AAAA" })).rejects.toMatchObject({ status: 502 });
  });

  it("gives up on an answer that never comes at the attempt's timeout", async () => {
    const api = standIn();
    api.failNext({ hang: true }, 3);
    await expect(transcribeChunk(aiRunner(REST, api.fetch)!, makeWav(1), 0, 1, { ...FAST, attemptTimeoutMs: 50, budgetMs: 200 })).rejects.toBeInstanceOf(
      TranscriptionFailed,
    );
  });
});

describe("the engine channel over REST", () => {
  let engine: FakeEngine;
  let api: WorkersAiRestStandIn;
  let previousFetch: typeof fetch;
  beforeEach(() => {
    engine = new FakeEngine();
    engine.install();
    api = standIn("the answer is forty two");
    previousFetch = globalThis.fetch;
    // The Worker's own outbound fetch: calls to the configured base reach the stand-in, the rest pass on.
    globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new Request(input, init).url;
      return url.startsWith(BASE) ? api.fetch(input, init) : previousFetch(input, init);
    };
  });
  afterEach(() => {
    globalThis.fetch = previousFetch;
  });

  it("transcribes a job's chunk over HTTP with the configured token when the binding is only local's placeholder", async () => {
    const account = await createAccount("unmetered");
    const client = await startJob(account, engine);
    await client.probe({ duration_seconds: 120 });
    const request = new Request(client.url("transcribe"), {
      method: "POST",
      headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "audio/wav", [CHUNK_START_HEADER]: "30.000" },
      body: makeWav(2),
    });
    const ctx = createExecutionContext();
    // env.AI is miniflare's placeholder, which only throws: the REST settings route around it.
    const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, { ...env, ...REST }, ctx);
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    const result = TranscribeResult.parse(await response.json());
    expect(result.words.map((w) => w.text).join(" ")).toBe("the answer is forty two");
    expect(api.requestsFor(WHISPER).map((r) => r.authorization)).toEqual([`Bearer ${TOKEN}`]);
  });
});
