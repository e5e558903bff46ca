/**
 * The engine channel's brand and language routes:
 * POST /internal/v1/jobs/:id/translate (Workers AI @cf/meta/m2m100-1.2b; the
 * AI binding is the stand-in shaped as the model documents its input and
 * output, the only fake), GET /internal/v1/jobs/:id/logo, and the `language`
 * hint reaching speech-to-text. Token, job state, D1, R2 and the Durable
 * Objects are real.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { TRANSLATE_MAX_TEXTS, TranslateResult } from "#contract";
import { translateTexts, TRANSLATE_CONCURRENCY, TranslationFailed, TranslationUnavailable } from "../../src/engine/translate.ts";
import worker from "../../src/index.ts";
import { type EngineClient, FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { makePng } from "./images.ts";
import { startJob } from "./jobs-helpers.ts";
import { M2M100StandIn, type M2M100Outcome } from "./m2m100-stand-in.ts";
import { makeWav, WhisperStandIn } from "./whisper-stand-in.ts";

const FRENCH = { fr: { "Welcome back everyone.": "Bon retour a tous.", "Today we talk about clips.": "Aujourd'hui nous parlons de clips." } };

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

/** Sends a request straight into the Worker's fetch handler with the chosen AI binding. */
async function send(request: Request, ai: { binding<T>(): T } | undefined | "local"): Promise<Response> {
  const bindings: Env = { ...env };
  if (ai === undefined) delete (bindings as Partial<Env>).AI;
  else if (ai !== "local") bindings.AI = ai.binding<Ai>();
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, bindings, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

function translate(client: EngineClient, body: unknown, ai: M2M100StandIn | undefined | "local", token = client.token): Promise<Response> {
  return send(
    new Request(client.url("translate"), { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: JSON.stringify(body) }),
    ai,
  );
}

async function processingJob(config: Record<string, unknown> = {}, account?: TestAccount): Promise<EngineClient> {
  const owner = account ?? (await createAccount("unmetered"));
  if (Object.keys(config).length > 0) {
    const saved = await api(owner, "/api/v1/configs/brand", { method: "PUT", body: JSON.stringify(config) });
    expect(saved.status).toBeLessThan(300);
  }
  const client = await startJob(owner, engine, { video_url: "https://videos.example.com/t.mp4", video_type: "podcast", ...(Object.keys(config).length > 0 ? { config_name: "brand" } : {}) });
  await client.probe({ duration_seconds: 120 });
  return client;
}

/** A job with a caption_language: only such a job's token opens /translate (src/engine/scopes.ts). */
function translatingJob(): Promise<EngineClient> {
  return processingJob({ caption_language: "fr" });
}

const REQUEST = { source_language: "en", target_language: "fr", texts: ["Welcome back everyone.", "Today we talk about clips.", "Not in the book."] };

describe("POST /internal/v1/jobs/:id/translate", () => {
  it("translates each text with m2m100-1.2b, in order", async () => {
    const client = await translatingJob();
    const ai = new M2M100StandIn(FRENCH);
    const res = await translate(client, REQUEST, ai);
    expect(res.status).toBe(200);
    expect(TranslateResult.parse(await res.json())).toEqual({ texts: ["Bon retour a tous.", "Aujourd'hui nous parlons de clips.", "[fr] Not in the book."] });
    expect(ai.calls.map((c) => c.model)).toEqual(Array(3).fill("@cf/meta/m2m100-1.2b"));
    // The documented input: text, source_lang, target_lang (ISO 639-1 codes).
    expect(ai.calls.map((c) => c.inputs).sort((a, b) => String(a.text).localeCompare(String(b.text)))).toEqual([
      { text: "Not in the book.", source_lang: "en", target_lang: "fr" },
      { text: "Today we talk about clips.", source_lang: "en", target_lang: "fr" },
      { text: "Welcome back everyone.", source_lang: "en", target_lang: "fr" },
    ]);
  });

  it("retries a failing call and answers once it succeeds", async () => {
    const client = await translatingJob();
    const ai = new M2M100StandIn(FRENCH, [{ kind: "throw", message: "3040: Capacity temporarily exceeded" }, { kind: "answer" }]);
    const res = await translate(client, { ...REQUEST, texts: ["Welcome back everyone."] }, ai);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ texts: ["Bon retour a tous."] });
    expect(ai.calls).toHaveLength(2);
  });

  it("answers 502 translation_failed after its retries: errors, an async answer, an empty translation", async () => {
    const outcomes: M2M100Outcome[][] = [
      [{ kind: "throw", message: "3040: Capacity temporarily exceeded" }],
      // What the model answers to a batch queued for later: not a translation.
      [{ kind: "raw", output: { request_id: "req-123" } }],
      [{ kind: "raw", output: { translated_text: "   " } }],
    ];
    for (const outcome of outcomes) {
      const client = await translatingJob();
      const ai = new M2M100StandIn(FRENCH, outcome);
      await expectProblem(await translate(client, { ...REQUEST, texts: ["Welcome back everyone."] }, ai), 502, "translation_failed");
      expect(ai.calls).toHaveLength(3);
    }
  }, 30_000);

  it("answers 503 translation_unavailable without an AI binding, and with wrangler's local placeholder", async () => {
    const client = await translatingJob();
    await expectProblem(await translate(client, REQUEST, undefined), 503, "translation_unavailable");
    await expectProblem(await translate(client, REQUEST, "local"), 503, "translation_unavailable");
  });

  it("refuses what is not the contract's request, and other jobs' tokens, without calling the model", async () => {
    const client = await translatingJob();
    const other = await translatingJob();
    const ai = new M2M100StandIn(FRENCH);
    for (const body of [
      { ...REQUEST, target_language: "tlh" },
      { ...REQUEST, texts: [] },
      { ...REQUEST, texts: [""] },
      { ...REQUEST, texts: Array(TRANSLATE_MAX_TEXTS + 1).fill("x") },
      { ...REQUEST, texts: ["x".repeat(601)] },
      "not json at all",
    ]) {
      await expectProblem(await translate(client, body, ai), 400, "invalid_request");
    }
    expect((await translate(client, REQUEST, ai, other.token)).status).toBe(401);
    // A job without a caption_language: its own token does not open the route.
    const untranslated = await processingJob();
    await expectProblem(await translate(untranslated, REQUEST, ai), 401, "unauthorized");
    expect(ai.calls).toHaveLength(0);
  });

  it("runs at most a few texts at once (the account's model rate limit is per minute)", async () => {
    let inFlight = 0;
    let most = 0;
    const slow = {
      async run(_model: string, inputs: { text: string }) {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        return { translated_text: `fr:${inputs.text}` };
      },
    };
    const texts = Array.from({ length: TRANSLATE_MAX_TEXTS }, (_, i) => `text ${i}`);
    const result = await translateTexts(slow, { source_language: "en", target_language: "fr", texts });
    expect(result.texts).toEqual(texts.map((t) => `fr:${t}`));
    expect(most).toBeLessThanOrEqual(TRANSLATE_CONCURRENCY);
    expect(most).toBeGreaterThan(1);
    await expect(translateTexts(undefined, { source_language: "en", target_language: "fr", texts })).rejects.toBeInstanceOf(TranslationUnavailable);
    const failing = new M2M100StandIn({}, [{ kind: "throw", message: "boom" }]);
    await expect(translateTexts(failing.binding(), { source_language: "en", target_language: "fr", texts: ["a"] }, { attempts: 2, baseDelayMs: 1, attemptTimeoutMs: 100, budgetMs: 1000 })).rejects.toBeInstanceOf(TranslationFailed);
  });
});

describe("GET /internal/v1/jobs/:id/logo", () => {
  function getLogo(client: EngineClient, token = client.token): Promise<Response> {
    return send(new Request(client.url("logo"), { headers: { Authorization: `Bearer ${token}` } }), undefined);
  }

  it("gives the engine the account's logo when the job places one, and nothing otherwise", async () => {
    const account = await createAccount("unmetered");
    const png = await makePng({ width: 24, height: 12 });
    expect((await api(account, "/api/v1/logo", { method: "PUT", body: png, headers: { "Content-Type": "image/png" } })).status).toBe(201);
    const client = await processingJob({ logo_position: "top-left", logo_opacity: 0.8 }, account);
    const res = await getLogo(client);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/png");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png);
    // Another job's token, or no token: nothing.
    const stranger = await processingJob();
    expect((await getLogo(client, stranger.token)).status).toBe(401);
    // A job whose configuration places no logo cannot read one: its token does not open the route (src/engine/scopes.ts).
    await expectProblem(await getLogo(stranger), 401, "unauthorized");
    // Deleted since the job was submitted: 404, and the engine makes the clips without it.
    expect((await api(account, "/api/v1/logo", { method: "DELETE" })).status).toBe(204);
    await expectProblem(await getLogo(client), 404, "not_found");
  });
});

describe("the language hint", () => {
  it("is passed to speech-to-text as the model's language option", async () => {
    const client = await processingJob({ language: "es" });
    const ai = new WhisperStandIn([{ kind: "answer", words: [{ word: "Hola", start: 0.1, end: 0.5 }], language: "es" }]);
    const res = await send(
      new Request(client.url("transcribe"), { method: "POST", headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "audio/wav", "Chunk-Start-Seconds": "0.000" }, body: makeWav(1) }),
      { binding: <T,>() => ai.binding() as unknown as T },
    );
    expect(res.status).toBe(200);
    expect(ai.calls[0]!.inputs).toMatchObject({ task: "transcribe", language: "es" });
    // Without a hint, no language option: the model detects it.
    const plain = await processingJob();
    const detect = new WhisperStandIn([{ kind: "answer", words: [{ word: "Hi", start: 0.1, end: 0.5 }], language: "en" }]);
    await send(
      new Request(plain.url("transcribe"), { method: "POST", headers: { Authorization: `Bearer ${plain.token}`, "Content-Type": "audio/wav", "Chunk-Start-Seconds": "0.000" }, body: makeWav(1) }),
      { binding: <T,>() => detect.binding() as unknown as T },
    );
    expect(detect.calls[0]!.inputs).not.toHaveProperty("language");
  });
});
