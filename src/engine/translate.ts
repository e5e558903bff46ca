/**
 * Caption translation on Workers AI for the engine's /translate
 * route: `@cf/meta/m2m100-1.2b`, Meta's M2M-100 (1.2 billion parameters),
 * which translates directly between any two of its 100 languages.
 *
 * Its documented input is `{text (min length 1), source_lang (default "en"),
 * target_lang}` with ISO 639-1 codes, and its output `{translated_text}`
 * (workers-types Ai_Cf_Meta_M2M100_1_2B_Input/Output; a `requests` batch
 * answers `{request_id}` through the async queue instead, which a job
 * waiting on its captions cannot use). Limits that shape this module: the
 * model's generation is capped at 200 tokens (its config's max_length), so
 * the engine sends one sentence per text and splits any over 600 characters;
 * the account's Workers AI rate limit for translation is 720 requests a
 * minute, so texts run a few at a time, not all at once; priced at $0.34 per
 * million input and output tokens.
 *
 * Each text is retried on its own (errors, timeouts, an answer of the wrong
 * shape or an empty translation of a non-empty text) within one time budget
 * that ends before the engine's 30 s callback timeout, as speech-to-text does.
 */
import { z } from "zod";
import type { TranslateRequest, TranslateResult } from "#contract";
import { DEFAULT_RETRY_POLICY, retrying, type RetryPolicy } from "./ai-retry.ts";
import { withTimeout } from "../lib/timeout.ts";
import type { AiRunner } from "../ai/runner.ts";

/**
 * The Workers AI transport this module calls (src/ai): structural, so the
 * engine's Node suites can run it against the same stand-in.
 */
export type TranslationAi = AiRunner;

export const TRANSLATION_MODEL = "@cf/meta/m2m100-1.2b";
/** Texts in flight at once for one request. */
export const TRANSLATE_CONCURRENCY = 4;

/** This deployment cannot translate (no AI binding, or `wrangler dev --local`'s placeholder). */
export class TranslationUnavailable extends Error {
  override readonly name = "TranslationUnavailable";
}

/** The model kept failing for one of the texts within the retry policy. */
export class TranslationFailed extends Error {
  override readonly name = "TranslationFailed";
}

const M2M100Output = z.object({ translated_text: z.string() }).loose();

async function runOnce(ai: TranslationAi, input: { text: string; source_lang: string; target_lang: string }, timeoutMs: number): Promise<string> {
  const answer: unknown = await withTimeout(timeoutMs, (signal) => ai.run(TRANSLATION_MODEL, input, { signal }));
  const parsed = M2M100Output.safeParse(answer);
  if (!parsed.success) throw new Error("the model answered in an unexpected shape");
  const text = parsed.data.translated_text.trim();
  if (text === "") throw new Error("the model answered an empty translation");
  return text;
}

/**
 * Translates every text of the request, in order. Throws TranslationUnavailable
 * without an AI binding (or with the local placeholder), TranslationFailed once
 * a text has used up the retry policy.
 */
export async function translateTexts(ai: TranslationAi | undefined, request: TranslateRequest, policy: RetryPolicy = DEFAULT_RETRY_POLICY): Promise<TranslateResult> {
  if (!ai) throw new TranslationUnavailable("Workers AI is not configured (no AI binding, and no WORKERS_AI_ACCOUNT_ID with WORKERS_AI_TOKEN).");
  const began = Date.now();
  const out = new Array<string>(request.texts.length);
  let next = 0;
  const translateOne = async (text: string): Promise<string> => {
    // One budget for the whole request (its texts run a few at a time): each text gets what is left of it.
    const left = { ...policy, budgetMs: Math.max(1, policy.budgetMs - (Date.now() - began)) };
    const outcome = await retrying(left, (timeoutMs) => runOnce(ai, { text, source_lang: request.source_language, target_lang: request.target_language }, timeoutMs));
    if (outcome.ok) return outcome.value;
    if (outcome.local) throw new TranslationUnavailable("Workers AI is not reachable from local development (set WORKERS_AI_ACCOUNT_ID and WORKERS_AI_TOKEN to use its REST API).");
    throw new TranslationFailed(`Translation failed ${outcome.failures.length} times: ${outcome.failures.at(-1) ?? "no attempt fit the time budget"}`);
  };
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < request.texts.length) {
      const index = next;
      next += 1;
      try {
        out[index] = await translateOne(request.texts[index]!);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  // The first failure ends the request; lanes still running finish their current text and stop.
  await Promise.all(Array.from({ length: Math.min(TRANSLATE_CONCURRENCY, request.texts.length) }, lane));
  return { texts: out };
}
