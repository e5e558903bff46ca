/**
 * POST /:job_id/similarity on the engine channel (#contract):
 * mounted inside `callbacks`, so its token middleware runs first. The engine
 * sends its prompt and up to SIMILARITY_MAX_TEXTS transcript sentences and
 * gets one cosine similarity per sentence from Workers AI embeddings
 * (embeddings.ts). 503 embedding_unavailable and 502 embedding_failed tell
 * the engine to match the prompt by words instead.
 */
import { Hono } from "hono";
import { SimilarityRequest } from "#contract";
import type { AppEnv } from "../http/app-env.ts";
import { readBodyCapped } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { keepEngineAwake } from "../fleet/engine-host.ts";
import { EmbeddingFailed, EmbeddingUnavailable, similarities } from "./embeddings.ts";
import { liveProcessingJob } from "./live-job.ts";
import { checkSimilarityScope } from "../ai/allowance.ts";
import { jobAiRunner } from "../ai/usage.ts";

/** 101 texts of at most 2,000 characters, in UTF-8 and JSON escapes, with room to spare. */
const MAX_SIMILARITY_BODY_BYTES = 1024 * 1024;

export const similarityChannel = new Hono<{ Bindings: Env; Variables: AppEnv["Variables"] }>().post("/:job_id/similarity", async (c) => {
  const jobId = c.req.param("job_id");
  // A sign of life like any report: re-arms the watchdog; 409 once the job is not processing.
  const job = await liveProcessingJob(c.env, jobId, {});
  const bytes = await readBodyCapped(c.req.raw, MAX_SIMILARITY_BODY_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new AppError("invalid_request", "The body is not JSON.");
  }
  const parsed = SimilarityRequest.safeParse(json);
  if (!parsed.success) {
    throw new AppError("invalid_request", "The body does not match the contract's SimilarityRequest.", {
      errors: parsed.error.issues.slice(0, 20).map((issue) => ({ path: issue.path.join(".") || "(body)", message: issue.message })),
    });
  }
  checkSimilarityScope(job, parsed.data.query);
  await keepEngineAwake(c.env, jobId);
  try {
    return c.json(await similarities(jobAiRunner(c.env, jobId), parsed.data.query, parsed.data.texts));
  } catch (err) {
    if (err instanceof EmbeddingUnavailable) throw new AppError("embedding_unavailable", `${err.message} Match the prompt by words.`);
    if (err instanceof EmbeddingFailed) {
      console.warn(`[${jobId}] ${err.message}`);
      throw new AppError("embedding_failed", `${err.message}. Match the prompt by words.`);
    }
    throw err;
  }
});
