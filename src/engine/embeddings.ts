/**
 * Prompt matching by meaning: Workers AI text embeddings
 * (`@cf/baai/bge-m3`, multilingual) of the job's prompt and of transcript
 * sentences, reduced here to one cosine similarity per sentence so vectors
 * never cross the engine channel.
 *
 * The model, as its page documents it (developers.cloudflare.com/ai/models/
 * @cf/baai/bge-m3, and workers-types' Ai_Cf_Baai_Bge_M3_*): input
 * `{text: string | string[], truncate_inputs?}`; output for that input
 * `{shape: [n, 1024], data: number[][], pooling: "cls"}`; a 60,000-token
 * context window per request; $0.012 per million input tokens. Calls here
 * stay far inside it: at most EMBED_BATCH_TEXTS texts and
 * EMBED_BATCH_CHARS characters each (a character is at most about one token
 * in the scripts the model reads), with truncate_inputs on so one overlong
 * sentence cannot fail the call.
 */
import { z } from "zod";
import { SIMILARITY_MAX_TEXTS, textBatches, type SimilarityResult } from "#contract";
import { DEFAULT_RETRY_POLICY, retrying, type RetryPolicy } from "./ai-retry.ts";
import { withTimeout } from "../lib/timeout.ts";
import type { AiRunner } from "../ai/runner.ts";

export const EMBEDDING_MODEL = "@cf/baai/bge-m3";
/** The query and a whole engine request (SIMILARITY_MAX_TEXTS sentences) in one call. */
export const EMBED_BATCH_TEXTS = SIMILARITY_MAX_TEXTS + 1;
export const EMBED_BATCH_CHARS = 20_000;

export class EmbeddingUnavailable extends Error {
  override readonly name = "EmbeddingUnavailable";
}

export class EmbeddingFailed extends Error {
  override readonly name = "EmbeddingFailed";
}

/** The documented output for `{text: [...]}`: one vector per text. */
const EmbeddingOutput = z
  .object({
    shape: z.array(z.number()).optional(),
    data: z.array(z.array(z.number())),
    pooling: z.string().optional(),
  })
  .loose();

/** Texts in consecutive batches within the per-call limits. */
export function batches(texts: string[]): string[][] {
  return textBatches(texts, EMBED_BATCH_TEXTS, EMBED_BATCH_CHARS);
}

async function embedOnce(ai: AiRunner, texts: string[], timeoutMs: number): Promise<number[][]> {
  const answer: unknown = await withTimeout(timeoutMs, (signal) => ai.run(EMBEDDING_MODEL, { text: texts, truncate_inputs: true }, { signal }));
  const parsed = EmbeddingOutput.safeParse(answer);
  if (!parsed.success) throw new Error("the model answered in an unexpected shape");
  const vectors = parsed.data.data;
  const width = vectors[0]?.length ?? 0;
  if (vectors.length !== texts.length || width === 0 || vectors.some((v) => v.length !== width)) {
    throw new Error(`the model answered ${vectors.length} vectors for ${texts.length} texts`);
  }
  return vectors;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  if (na === 0 || nb === 0) return 0;
  return Math.max(-1, Math.min(1, dot / Math.sqrt(na * nb)));
}

/**
 * Cosine similarity of each text to the query. The query rides in the first
 * batch. Throws EmbeddingUnavailable without an AI binding (or with the
 * local placeholder) and EmbeddingFailed once a batch's retries are spent.
 */
export async function similarities(ai: AiRunner | undefined, query: string, texts: string[], policy: RetryPolicy = DEFAULT_RETRY_POLICY): Promise<SimilarityResult> {
  if (!ai) throw new EmbeddingUnavailable("Workers AI is not configured (no AI binding, and no WORKERS_AI_ACCOUNT_ID with WORKERS_AI_TOKEN).");
  const parts = batches([query, ...texts]);
  const vectors: number[][] = [];
  for (const part of parts) {
    const outcome = await retrying(policy, (timeoutMs) => embedOnce(ai, part, timeoutMs));
    if (outcome.ok) {
      vectors.push(...outcome.value);
      continue;
    }
    if (outcome.local) throw new EmbeddingUnavailable("Workers AI is not reachable from local development (set WORKERS_AI_ACCOUNT_ID and WORKERS_AI_TOKEN to use its REST API).");
    throw new EmbeddingFailed(`Text embeddings failed ${outcome.failures.length} times: ${outcome.failures.at(-1) ?? "no attempt fit the time budget"}`);
  }
  const [queryVector, ...textVectors] = vectors;
  if (textVectors.some((v) => v.length !== queryVector!.length)) throw new EmbeddingFailed("The model answered vectors of different widths.");
  return { model: EMBEDDING_MODEL, similarities: textVectors.map((v) => Math.round(cosine(queryVector!, v) * 1e6) / 1e6) };
}
