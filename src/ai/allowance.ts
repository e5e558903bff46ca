/**
 * How much Workers AI one job may spend on the engine channel, so a job
 * token can never spend for anything but its own job:
 *
 * - translation only into the job's `caption_language`;
 * - embeddings only for the job's own `prompt` as the query;
 * - speech-to-text of at most the job's probed source length, plus the
 *   chunks' overlap (TRANSCRIBE_CHUNK_OVERLAP_SECONDS per
 *   TRANSCRIBE_MAX_CHUNK_SECONDS), plus TRANSCRIBE_MARGIN_SECONDS (default
 *   60) for a chunk the engine sends twice.
 *
 * Each refusal is the documented problem `ai_scope_exceeded` (403), which the
 * engine takes as "not available" and goes on without.
 */
import { SIMILARITY_MAX_TEXT_CHARS, TRANSCRIBE_CHUNK_OVERLAP_SECONDS, TRANSCRIBE_MAX_CHUNK_SECONDS } from "#contract";
import type { Job } from "../db/jobs.ts";
import { DomainError } from "../domain/errors.ts";

export const DEFAULT_TRANSCRIBE_MARGIN_SECONDS = 60;

export function transcribeMarginSeconds(env: Pick<Env, "TRANSCRIBE_MARGIN_SECONDS">): number {
  const parsed = Number(env.TRANSCRIBE_MARGIN_SECONDS);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : DEFAULT_TRANSCRIBE_MARGIN_SECONDS;
}

/** Seconds of audio the job may send to speech-to-text in all (0 before its source was probed). */
export function transcriptionAllowanceSeconds(job: Pick<Job, "sourceDurationSeconds">, marginSeconds: number): number {
  const source = job.sourceDurationSeconds ?? 0;
  const overlap = TRANSCRIBE_MAX_CHUNK_SECONDS / (TRANSCRIBE_MAX_CHUNK_SECONDS - TRANSCRIBE_CHUNK_OVERLAP_SECONDS);
  return source * overlap + marginSeconds;
}

export function checkTranslationScope(job: Pick<Job, "id" | "config">, targetLanguage: string): void {
  const wanted = job.config.caption_language ?? null;
  if (wanted === null || wanted !== targetLanguage) {
    throw new DomainError(
      "ai_scope_exceeded",
      `Job ${job.id} translates only into its caption_language (${wanted ?? "none"}), not ${targetLanguage}.`,
    );
  }
}

export function checkSimilarityScope(job: Pick<Job, "id" | "config">, query: string): void {
  const prompt = job.config.prompt ?? null;
  // The engine sends the prompt cut to the contract's text limit.
  if (prompt === null || prompt.slice(0, SIMILARITY_MAX_TEXT_CHARS) !== query) {
    throw new DomainError("ai_scope_exceeded", `Job ${job.id} matches only its own prompt by meaning; the query is not it.`);
  }
}

/**
 * Counts `seconds` against the job's allowance, atomically in D1 (two
 * chunks at once cannot both slip under it); refuses when they do not fit.
 * giveBack returns them when the model did not answer.
 */
export async function claimAudioSeconds(env: Env, job: Pick<Job, "id" | "sourceDurationSeconds">, seconds: number): Promise<{ giveBack(): Promise<void> }> {
  const allowance = transcriptionAllowanceSeconds(job, transcribeMarginSeconds(env));
  const claimed = await env.DB.prepare("UPDATE jobs SET ai_audio_seconds = ai_audio_seconds + ?1 WHERE id = ?2 AND ai_audio_seconds + ?1 <= ?3")
    .bind(seconds, job.id, allowance)
    .run();
  if (claimed.meta.changes !== 1) {
    throw new DomainError(
      "ai_scope_exceeded",
      `Job ${job.id} has used its speech-to-text allowance (${Math.round(allowance)} s of audio: its source, the chunks' overlap and ${transcribeMarginSeconds(env)} s).`,
    );
  }
  return {
    giveBack: async () => {
      await env.DB.prepare("UPDATE jobs SET ai_audio_seconds = MAX(0, ai_audio_seconds - ?1) WHERE id = ?2").bind(seconds, job.id).run();
    },
  };
}
