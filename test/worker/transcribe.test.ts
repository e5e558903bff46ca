/**
 * POST /internal/v1/jobs/:id/transcribe: the Worker's Workers AI route for the
 * engine's audio chunks. The AI binding is the stand-in (the only fake);
 * everything else (token, job state, D1, the watchdog's DO) is real.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { CHUNK_START_HEADER, TRANSCRIBE_MAX_CHUNK_BYTES, TranscribeResult } from "#contract";
import { transcribeChunk, TranscriptionFailed, TranscriptionUnavailable, toTranscribeResult } from "../../src/engine/whisper.ts";
import worker from "../../src/index.ts";
import { type EngineClient, FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";
import { makeWav, whisperOutput, WhisperStandIn, type SpokenWord } from "./whisper-stand-in.ts";

const SPOKEN: SpokenWord[] = [
  { word: "Welcome", start: 0.4, end: 0.82 },
  { word: "back", start: 0.82, end: 1.1 },
  { word: "everyone.", start: 1.1, end: 1.74 },
];

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

interface ChunkOptions {
  /** undefined: no AI binding at all; "local": the binding miniflare itself provides. */
  ai: WhisperStandIn | undefined | "local";
  body?: BodyInit;
  contentType?: string;
  chunkStart?: string | null;
  token?: string;
}

/** Sends a chunk straight into the Worker's fetch handler with the chosen AI binding. */
async function sendChunk(client: EngineClient, options: ChunkOptions): Promise<Response> {
  const headers = new Headers({ Authorization: `Bearer ${options.token ?? client.token}` });
  headers.set("Content-Type", options.contentType ?? "audio/wav");
  if (options.chunkStart !== null) headers.set(CHUNK_START_HEADER, options.chunkStart ?? "29.000");
  const request = new Request(client.url("transcribe"), { method: "POST", headers, body: options.body ?? makeWav(2) });
  const bindings: Env = { ...env };
  if (options.ai === undefined) delete (bindings as Partial<Env>).AI;
  else if (options.ai !== "local") bindings.AI = options.ai.binding();
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, bindings, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function processingJob(): Promise<EngineClient> {
  const account = await createAccount("unmetered");
  const client = await startJob(account, engine);
  await client.probe({ duration_seconds: 120 });
  return client;
}

describe("POST /internal/v1/jobs/:id/transcribe", () => {
  it("sends the chunk to whisper-large-v3-turbo and answers its words in source time", async () => {
    const client = await processingJob();
    const ai = new WhisperStandIn([{ kind: "answer", words: SPOKEN, language: "en" }]);
    const wav = makeWav(2);
    const res = await sendChunk(client, { ai, body: wav, chunkStart: "29.000" });
    expect(res.status).toBe(200);
    const result = TranscribeResult.parse(await res.json());
    expect(result).toEqual({
      language: "en",
      words: [
        { text: "Welcome", start: 29.4, end: 29.82 },
        { text: "back", start: 29.82, end: 30.1 },
        { text: "everyone.", start: 30.1, end: 30.74 },
      ],
    });
    expect(ai.calls).toHaveLength(1);
    expect(ai.calls[0]!.model).toBe("@cf/openai/whisper-large-v3-turbo");
    // The model got exactly the bytes the engine sent.
    expect(ai.calls[0]!.audio).toEqual(wav);
  });

  it("requires the job's own engine token", async () => {
    const client = await processingJob();
    const other = await processingJob();
    const ai = new WhisperStandIn([{ kind: "answer", words: SPOKEN }]);
    await expectProblem(await sendChunk(client, { ai, token: "not-a-token-at-all-0123456789" }), 401, "unauthorized");
    await expectProblem(await sendChunk(client, { ai, token: other.token }), 401, "unauthorized");
    expect(ai.calls).toHaveLength(0);
  });

  it("answers 409 job_not_active once the job is no longer processing", async () => {
    const account = await createAccount("unmetered");
    const client = await startJob(account, engine);
    const canceled = await api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" });
    expect(canceled.status).toBe(200);
    const ai = new WhisperStandIn([{ kind: "answer", words: SPOKEN }]);
    await expectProblem(await sendChunk(client, { ai }), 409, "job_not_active");
    expect(ai.calls).toHaveLength(0);
  });

  it("caps the chunk at TRANSCRIBE_MAX_CHUNK_BYTES, declared or streamed", async () => {
    const client = await processingJob();
    const ai = new WhisperStandIn([{ kind: "answer", words: SPOKEN }]);
    const oversized = makeWav((TRANSCRIBE_MAX_CHUNK_BYTES - 44) / 32_000 + 0.01);
    expect(oversized.byteLength).toBeGreaterThan(TRANSCRIBE_MAX_CHUNK_BYTES);
    await expectProblem(await sendChunk(client, { ai, body: oversized }), 413, "payload_too_large");
    // Without a Content-Length the bytes are counted as they arrive.
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < oversized.byteLength; at += 65_536) controller.enqueue(oversized.slice(at, at + 65_536));
        controller.close();
      },
    });
    await expectProblem(await sendChunk(client, { ai, body: streamed }), 413, "payload_too_large");
    // The largest allowed chunk (30 s of 16 kHz mono s16le) passes.
    expect((await sendChunk(client, { ai, body: makeWav(30) })).status).toBe(200);
    expect(ai.calls).toHaveLength(1);
  });

  it("refuses what is not the contract's audio with a clear 4xx and never calls the model", async () => {
    const client = await processingJob();
    const ai = new WhisperStandIn([{ kind: "answer", words: SPOKEN }]);
    await expectProblem(await sendChunk(client, { ai, contentType: "application/json", body: "{}" }), 415, "unsupported_media_type");
    await expectProblem(await sendChunk(client, { ai, body: new TextEncoder().encode("ID3 not a wav file") }), 400, "invalid_request");
    const stereo = await expectProblem(await sendChunk(client, { ai, body: makeWav(1, { channels: 2 }) }), 400, "invalid_request");
    expect(stereo.detail).toContain("mono");
    await expectProblem(await sendChunk(client, { ai, body: makeWav(1, { sampleRate: 44_100 }) }), 400, "invalid_request");
    await expectProblem(await sendChunk(client, { ai, body: makeWav(0) }), 400, "invalid_request");
    for (const chunkStart of [null, "", "-1", "1e3", "NaN", "12,5", "99999999"]) {
      await expectProblem(await sendChunk(client, { ai, chunkStart }), 400, "invalid_request");
    }
    expect(ai.calls).toHaveLength(0);
  });

  it("retries model errors and answers once one attempt succeeds", async () => {
    const client = await processingJob();
    const ai = new WhisperStandIn([
      { kind: "throw", message: "3040: Capacity temporarily exceeded, please try again." },
      { kind: "raw", output: { result: "not the documented shape" } },
      { kind: "answer", words: SPOKEN },
    ]);
    const res = await sendChunk(client, { ai, chunkStart: "0" });
    expect(res.status).toBe(200);
    expect(TranscribeResult.parse(await res.json()).words.map((w) => w.text)).toEqual(["Welcome", "back", "everyone."]);
    expect(ai.calls).toHaveLength(3);
  });

  it("answers 502 transcription_failed after its retries, and the job stays processing", async () => {
    const account = await createAccount("unmetered");
    const client = await startJob(account, engine);
    await client.probe({ duration_seconds: 60 });
    const ai = new WhisperStandIn([{ kind: "throw", message: "3001: Unknown internal error" }]);
    const problem = await expectProblem(await sendChunk(client, { ai }), 502, "transcription_failed");
    expect(problem.detail).toContain("3001: Unknown internal error");
    expect(ai.calls).toHaveLength(3);
    const job = await api(account, `/api/v1/jobs/${client.jobId}`);
    expect((await job.json<{ status: string }>()).status).toBe("processing");
  });

  it("answers 503 transcription_unavailable without an AI binding, and with wrangler's local placeholder", async () => {
    const client = await processingJob();
    await expectProblem(await sendChunk(client, { ai: undefined }), 503, "transcription_unavailable");
    // The test pool runs without remote bindings, as `wrangler dev --local` does: its env.AI only throws.
    await expectProblem(await sendChunk(client, { ai: "local" }), 503, "transcription_unavailable");
  });
});

describe("transcribeChunk", () => {
  const fast = { attempts: 3, baseDelayMs: 5, attemptTimeoutMs: 50, budgetMs: 1_000 };

  it("gives up on a model that never answers, one bounded attempt at a time", async () => {
    const ai = new WhisperStandIn([{ kind: "hang" }]);
    // A budget far above the three 50 ms attempts: how many attempts start must not depend on how fast a loaded
    // machine runs their timers (with 1 s, a stalled event loop left the third attempt out or ran past the bound).
    const budgetMs = 30_000;
    const began = Date.now();
    await expect(transcribeChunk(ai.binding(), makeWav(1), 0, 1, { ...fast, budgetMs })).rejects.toBeInstanceOf(TranscriptionFailed);
    expect(ai.calls).toHaveLength(3);
    // Each attempt was cut by its own timeout: a hanging model never holds the chunk for the whole budget.
    expect(Date.now() - began).toBeLessThan(budgetMs);
  });

  it("starts no attempt past its time budget", async () => {
    const ai = new WhisperStandIn([{ kind: "hang" }]);
    await expect(transcribeChunk(ai.binding(), makeWav(1), 0, 1, { ...fast, attemptTimeoutMs: 200, budgetMs: 200 })).rejects.toBeInstanceOf(
      TranscriptionFailed,
    );
    expect(ai.calls).toHaveLength(1);
  });

  it("is unavailable without a binding and never retries that", async () => {
    await expect(transcribeChunk(undefined, makeWav(1), 0, 1, fast)).rejects.toBeInstanceOf(TranscriptionUnavailable);
  });
});

describe("toTranscribeResult", () => {
  it("spreads a segment's words over its span when the model gave no word times", () => {
    const output = whisperOutput(
      [
        { word: "one", start: 2, end: 2.5 },
        { word: "three", start: 2.5, end: 3.5 },
      ],
      "en",
      false,
    );
    const result = toTranscribeResult(output, 10, 5);
    expect(result.words.map((w) => w.text)).toEqual(["one", "three"]);
    expect(result.words[0]!.start).toBe(12);
    expect(result.words.at(-1)!.end).toBe(13.5);
    // Longer words get more of the span.
    expect(result.words[1]!.end - result.words[1]!.start).toBeGreaterThan(result.words[0]!.end - result.words[0]!.start);
  });

  it("falls back to the vtt cues, then to the whole chunk, and keeps times inside the chunk", () => {
    const fromVtt = toTranscribeResult({ text: "hello there", vtt: "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nhello there\n" }, 60, 30);
    expect(fromVtt.words).toEqual([
      { text: "hello", start: 61, end: 61.5 },
      { text: "there", start: 61.5, end: 62 },
    ]);
    expect(fromVtt.language).toBeNull();
    const textOnly = toTranscribeResult({ text: "just text" }, 0, 4);
    expect(textOnly.words.at(-1)!.end).toBe(4);
    const outside = toTranscribeResult(
      { text: "late", segments: [{ start: 0, end: 40, text: "late", words: [{ word: " late", start: 35, end: 41 }] }] },
      100,
      30,
    );
    expect(outside.words).toEqual([{ text: "late", start: 130, end: 130 }]);
  });

  it("drops empty words and keeps source order", () => {
    const output = {
      text: "b a",
      segments: [
        { start: 1, end: 2, words: [{ word: " b", start: 1.5, end: 2 }, { word: "  ", start: 1.2, end: 1.3 }, { word: "a", start: 1, end: 1.4 }] },
      ],
      transcription_info: { language: "EN" },
    };
    expect(toTranscribeResult(output, 0, 30)).toEqual({
      language: "en",
      words: [
        { text: "a", start: 1, end: 1.4 },
        { text: "b", start: 1.5, end: 2 },
      ],
    });
  });
});
