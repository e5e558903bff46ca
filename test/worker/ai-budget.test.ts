/**
 * The account-wide Workers AI budget (src/ai/budget.ts): the bucket's
 * arithmetic on a given clock, and over the engine channel with a tiny
 * per-minute setting: calls beyond the account's minute, when the wait
 * would be longer than allowed, reach no model and end in the route's
 * *_failed problem (the engine goes on without), never in a failed job.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { CHUNK_START_HEADER } from "#contract";
import { taskOf, takeFrom } from "../../src/ai/budget.ts";
import worker from "../../src/index.ts";
import { type EngineClient, FakeEngine } from "./engine-stub.ts";
import { createAccount, expectProblem } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";
import { makeWav, WhisperStandIn } from "./whisper-stand-in.ts";

describe("the budget's minute", () => {
  it("lets a minute's calls through, then makes takers wait their turn in order, or refuses beyond the longest wait", () => {
    const window = { grants: [] as number[] };
    // 3 a minute.
    expect([takeFrom(window, 3, 0, 0), takeFrom(window, 3, 10_000, 0), takeFrom(window, 3, 20_000, 0)]).toEqual([
      { ok: true, waitMs: 0 },
      { ok: true, waitMs: 0 },
      { ok: true, waitMs: 0 },
    ]);
    // The fourth call's turn is when the first is a minute old.
    expect(takeFrom(window, 3, 30_000, 10_000)).toEqual({ ok: false, retryInMs: 30_000 });
    expect(takeFrom(window, 3, 30_000, 30_000)).toEqual({ ok: true, waitMs: 30_000 });
    // The next waiter queues behind it, at the second call's minute.
    expect(takeFrom(window, 3, 30_000, 60_000)).toEqual({ ok: true, waitMs: 40_000 });
  });

  it("never lets more than the limit into any minute, whenever the calls come", () => {
    const window = { grants: [] as number[] };
    const granted: number[] = [];
    // Bursts and trickles over five minutes: each caller takes its turn if it comes within 10 s.
    for (let t = 0; t < 300_000; t += t % 60_000 < 5_000 ? 50 : 1_700) {
      const turn = takeFrom(window, 30, t, 10_000);
      if (turn.ok) granted.push(t + turn.waitMs);
    }
    granted.sort((x, y) => x - y);
    const busiest = Math.max(...granted.map((start) => granted.filter((g) => g >= start && g < start + 60_000).length));
    expect(busiest).toBe(30);
  });

  it("counts whisper as speech, m2m100 as translation, bge-m3 as embeddings and any other model as text generation", () => {
    expect(["@cf/openai/whisper-large-v3-turbo", "@cf/meta/m2m100-1.2b", "@cf/baai/bge-m3", "@cf/meta/llama-3.3-70b-instruct-fp8-fast"].map(taskOf)).toEqual([
      "speech",
      "translation",
      "embedding",
      "text_generation",
    ]);
  });
});

describe("the budget on the engine channel", () => {
  let engine: FakeEngine;
  beforeEach(() => {
    engine = new FakeEngine();
    engine.install();
  });

  async function chunk(client: EngineClient, ai: WhisperStandIn): Promise<Response> {
    const request = new Request(client.url("transcribe"), {
      method: "POST",
      headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "audio/wav", [CHUNK_START_HEADER]: "0.000" },
      body: makeWav(2),
    });
    const ctx = createExecutionContext();
    // Two speech requests a minute for the whole account, and no waiting.
    const bindings: Env = { ...env, AI: ai.binding<Ai>(), AI_SPEECH_PER_MINUTE: "2", AI_BUDGET_MAX_WAIT_SECONDS: "0" };
    const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, bindings, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  it("shares one minute between two jobs' engines, and the call past it reaches no model and fails soft", async () => {
    // Two accounts (one active job each): the budget is the Workers AI account's, not a clipjobs account's.
    const clients = await Promise.all(
      [0, 1].map(async () => startJob(await createAccount("unmetered"), engine, { video_url: "https://videos.example.com/t.mp4", video_type: "podcast" })),
    );
    for (const client of clients) await client.probe({ duration_seconds: 120 });
    const ai = new WhisperStandIn([{ kind: "answer", words: [{ word: "hi", start: 0.1, end: 0.4 }] }]);
    expect((await chunk(clients[0]!, ai)).status).toBe(200);
    expect((await chunk(clients[1]!, ai)).status).toBe(200);
    const refused = await expectProblem(await chunk(clients[0]!, ai), 502, "transcription_failed");
    expect(String(refused.detail)).toContain("budget for speech is spent");
    expect(ai.calls).toHaveLength(2);
    // The job is not failed by it: it still takes reports.
    expect((await clients[0]!.progress({ progress: 50, step: "going on" })).status).toBe(200);
  });
});
