/**
 * The engine channel spends Workers AI only for its own job
 * (src/ai/allowance.ts), and the job records what it spent (src/ai/usage.ts):
 * a job token that asks for translation into another language, or for
 * transcription beyond its source's length and margin, gets 403
 * ai_scope_exceeded and reaches no model; every answered call shows in the
 * job's `ai_usage`. The models are the pool stand-ins; D1, the Durable
 * Objects and the token checks are real.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { CHUNK_START_HEADER } from "#contract";
import { transcriptionAllowanceSeconds } from "../../src/ai/allowance.ts";
import { measureCall, recordAiUsage } from "../../src/ai/usage.ts";
import worker from "../../src/index.ts";
import { type EngineClient, FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";
import { M2M100StandIn } from "./m2m100-stand-in.ts";
import { makeWav, WhisperStandIn } from "./whisper-stand-in.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

async function send(request: Request, ai: { binding<T>(): T }): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, { ...env, AI: ai.binding<Ai>() }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function processingJob(account: TestAccount, config: Record<string, unknown>, durationSeconds: number): Promise<EngineClient> {
  const saved = await api(account, "/api/v1/configs/ai", { method: "PUT", body: JSON.stringify(config) });
  expect(saved.status).toBeLessThan(300);
  const client = await startJob(account, engine, { video_url: "https://videos.example.com/t.mp4", video_type: "podcast", config_name: "ai" });
  await client.probe({ duration_seconds: durationSeconds });
  return client;
}

function chunk(client: EngineClient, seconds: number, start: number, ai: WhisperStandIn): Promise<Response> {
  return send(
    new Request(client.url("transcribe"), {
      method: "POST",
      headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "audio/wav", [CHUNK_START_HEADER]: start.toFixed(3) },
      body: makeWav(seconds),
    }),
    ai,
  );
}

/** The job's recorded usage as its API representation shows it; an active job's reads come from its Durable Object, so it is ended first. */
async function aiUsageOf(account: TestAccount, client: EngineClient): Promise<Record<string, number>> {
  const failed = await client.fail({ code: "no_clips_found", message: "Nothing stood out." });
  expect(failed.status).toBe(200);
  const res = await api(account, `/api/v1/jobs/${client.jobId}`);
  expect(res.status).toBe(200);
  const body = await res.json<{ status: string; ai_usage: Record<string, number> }>();
  expect(body.status).toBe("failed");
  return body.ai_usage;
}

describe("the engine channel's Workers AI allowance", () => {
  it("translates only into the job's caption_language: ten requests of 32 texts into ja for a fr job reach no model", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account, { caption_language: "fr" }, 120);
    const ai = new M2M100StandIn();
    const texts = Array.from({ length: 32 }, (_, i) => `${"a".repeat(490)} ${i}`);
    for (let i = 0; i < 10; i += 1) {
      const res = await send(
        new Request(client.url("translate"), {
          method: "POST",
          headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ source_language: "en", target_language: "ja", texts }),
        }),
        ai,
      );
      await expectProblem(res, 403, "ai_scope_exceeded");
    }
    expect(ai.calls).toHaveLength(0);
    const allowed = await send(
      new Request(client.url("translate"), {
        method: "POST",
        headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ source_language: "en", target_language: "fr", texts: ["Hello there."] }),
      }),
      ai,
    );
    expect(allowed.status).toBe(200);
    expect(ai.calls).toHaveLength(1);
    const usage = await aiUsageOf(account, client);
    expect(usage).toMatchObject({ model_calls: 1, audio_seconds: 0 });
    expect(usage.tokens_in).toBeGreaterThan(0);
    expect(usage.neurons).toBeGreaterThan(0);
  });

  it("transcribes at most the source's seconds, the chunks' overlap and the margin; the refused chunk reaches no model", async () => {
    const account = await createAccount("unmetered");
    // 20 s of source: 20 * 30/29 + 60 = about 80.7 s of audio in all.
    const client = await processingJob(account, {}, 20);
    expect(transcriptionAllowanceSeconds({ sourceDurationSeconds: 20 }, 60)).toBeCloseTo(80.69, 1);
    const ai = new WhisperStandIn([{ kind: "answer", words: [{ word: "hello", start: 0.2, end: 0.6 }] }]);
    expect((await chunk(client, 30, 0, ai)).status).toBe(200);
    expect((await chunk(client, 30, 29, ai)).status).toBe(200);
    await expectProblem(await chunk(client, 30, 58, ai), 403, "ai_scope_exceeded");
    expect(ai.calls).toHaveLength(2);
    // What is left still fits a shorter chunk.
    expect((await chunk(client, 20, 58, ai)).status).toBe(200);
    const usage = await aiUsageOf(account, client);
    expect(usage).toMatchObject({ model_calls: 3, audio_seconds: 80 });
    // whisper-large-v3-turbo: 46.63 neurons per audio minute.
    expect(usage.neurons).toBeCloseTo((46.63 * 80) / 60, 2);
  });

  it("gives the seconds of a chunk the model did not answer back to the allowance", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account, {}, 20);
    const failing = new WhisperStandIn([{ kind: "throw", message: "3001: Unknown internal error" }]);
    await expectProblem(await chunk(client, 30, 0, failing), 502, "transcription_failed");
    expect(await aiUsageOf(account, client)).toMatchObject({ model_calls: 0, audio_seconds: 0 });
  });
});

describe("recording usage", () => {
  it("takes the answer's own token counts when it gives them, else estimates; the judgement can record its own", async () => {
    const llm = measureCall("@cf/some/llm", { messages: [{ role: "user", content: "x".repeat(400) }] }, { response: "ok", usage: { prompt_tokens: 123, completion_tokens: 45 } });
    expect(llm).toMatchObject({ calls: 1, tokensIn: 123, tokensOut: 45, audioSeconds: 0 });
    const translation = measureCall("@cf/meta/m2m100-1.2b", { text: "x".repeat(40), source_lang: "en", target_lang: "fr" }, { translated_text: "y".repeat(20) });
    expect(translation).toMatchObject({ tokensIn: 10, tokensOut: 5 });
    expect(translation.neurons).toBeCloseTo((31_050 * 15) / 1e6, 6);

    const account = await createAccount("unmetered");
    const client = await processingJob(account, {}, 60);
    await recordAiUsage(env, client.jobId, { model: "@cf/some/llm", calls: 2, tokensIn: 1000, tokensOut: 200, neurons: 7.5 });
    expect(await aiUsageOf(account, client)).toMatchObject({ model_calls: 2, tokens_in: 1000, tokens_out: 200, neurons: 7.5 });
  });
});
