/**
 * One account-wide Workers AI budget shared by every engine and every job.
 * Workers AI limits an account per task type (by default 300 text-generation
 * and 720 speech-recognition requests a minute: developers.cloudflare.com/
 * workers-ai/platform/limits); hundreds of engines calling on their own
 * would run into its 429s together. So every model call first takes a token
 * from one Durable Object (AiBudget, a single instance): a token bucket per
 * task that refills at the task's per-minute setting. A call that finds the
 * bucket empty waits its turn when that comes within
 * AI_BUDGET_MAX_WAIT_SECONDS; otherwise it is refused with AiBudgetExhausted,
 * which ends that request's attempts and the route answers its *_failed
 * problem: the engine goes on without (never a failed job).
 */
import { DurableObject } from "cloudflare:workers";
import type { AiRunner } from "./runner.ts";

export type AiTask = "text_generation" | "speech" | "translation" | "embedding";

const MODEL_TASKS: Record<string, AiTask> = {
  "@cf/openai/whisper-large-v3-turbo": "speech",
  "@cf/meta/m2m100-1.2b": "translation",
  "@cf/baai/bge-m3": "embedding",
};

/** The task a model's calls count against; any model not listed is text generation (the tightest limit). */
export function taskOf(model: string): AiTask {
  return MODEL_TASKS[model] ?? "text_generation";
}

function setting(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
}

export function perMinuteLimit(env: Env, task: AiTask): number {
  switch (task) {
    case "text_generation":
      return setting(env.AI_TEXT_GENERATION_PER_MINUTE, 300);
    case "speech":
      return setting(env.AI_SPEECH_PER_MINUTE, 720);
    case "translation":
      return setting(env.AI_TRANSLATION_PER_MINUTE, 720);
    case "embedding":
      return setting(env.AI_EMBEDDING_PER_MINUTE, 3000);
  }
}

export function maxWaitMs(env: Env): number {
  return setting(env.AI_BUDGET_MAX_WAIT_SECONDS, 10) * 1000;
}

/** The account's budget for this task is spent for longer than a call may wait. */
export class AiBudgetExhausted extends Error {
  override readonly name = "AiBudgetExhausted";
}

export type TakeResult = { ok: true; waitMs: number } | { ok: false; retryInMs: number };

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * The bucket arithmetic, apart from the Durable Object so it is testable
 * with a clock: capacity `perMinute` (a minute's burst), refilled evenly.
 * A taker that must wait reserves its token now (the bucket goes below
 * zero), so waiters are served in order and never more than the limit.
 */
export function takeFrom(bucket: Bucket, perMinute: number, nowMs: number, maxWait: number): TakeResult {
  if (perMinute <= 0) return { ok: false, retryInMs: 60_000 };
  const ratePerMs = perMinute / 60_000;
  bucket.tokens = Math.min(perMinute, bucket.tokens + (nowMs - bucket.atMs) * ratePerMs);
  bucket.atMs = nowMs;
  const waitMs = bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) / ratePerMs);
  if (waitMs > maxWait) return { ok: false, retryInMs: waitMs };
  bucket.tokens -= 1;
  return { ok: true, waitMs };
}

/** The one budget (instance "account"); its buckets live in memory: an evicted object starts full, as a new minute would. */
export class AiBudget extends DurableObject<Env> {
  private readonly buckets = new Map<string, Bucket>();

  take(task: AiTask, perMinute: number, maxWait: number): TakeResult {
    const key = `${task}:${perMinute}`;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: perMinute, atMs: Date.now() };
      this.buckets.set(key, bucket);
    }
    return takeFrom(bucket, perMinute, Date.now(), maxWait);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A runner whose every call first takes its turn from the account-wide budget. */
export function budgetedRunner(env: Env, inner: AiRunner): AiRunner {
  return {
    async run(model, input, options) {
      const task = taskOf(model);
      const budget = env.AI_BUDGET.get(env.AI_BUDGET.idFromName("account"));
      const turn = await budget.take(task, perMinuteLimit(env, task), maxWaitMs(env));
      if (!turn.ok) {
        throw new AiBudgetExhausted(`The account's Workers AI budget for ${task} is spent for the next ${Math.ceil(turn.retryInMs / 1000)} s.`);
      }
      if (turn.waitMs > 0) await sleep(turn.waitMs);
      return inner.run(model, input, options);
    },
  };
}
