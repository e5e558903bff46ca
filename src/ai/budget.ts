/**
 * One account-wide Workers AI budget shared by every engine and every job.
 * Workers AI limits an account per task type (by default 300 text-generation
 * and 720 speech-recognition requests a minute: developers.cloudflare.com/
 * workers-ai/platform/limits); hundreds of engines calling on their own
 * would run into its 429s together. So every model call first takes its turn
 * from one Durable Object (AiBudget, a single instance): per task, at most
 * the task's per-minute setting in any 60 s. A call that finds the minute
 * spent waits its turn when that comes within
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

/** The calls granted (or reserved) in the last minute, in time order. */
export interface CallWindow {
  grants: number[];
}

const MINUTE_MS = 60_000;

/**
 * The window arithmetic, apart from the Durable Object so it is testable
 * with a clock. Workers AI counts requests a minute, so this keeps the times
 * of the calls it let through and never lets more than `perMinute` fall in
 * any 60 s: a call that would be one too many waits until the oldest of the
 * last `perMinute` is a minute old. (A token bucket holding a minute's calls
 * would let twice the limit through in a minute: a full bucket, then its
 * refill.) A taker that must wait reserves its moment now, so waiters are
 * served in order.
 */
export function takeFrom(window: CallWindow, perMinute: number, nowMs: number, maxWait: number): TakeResult {
  if (perMinute < 1) return { ok: false, retryInMs: MINUTE_MS };
  const grants = window.grants;
  // A grant a minute old or more is in no window from now on.
  let old = 0;
  while (old < grants.length && grants[old]! <= nowMs - MINUTE_MS) old += 1;
  if (old > 0) grants.splice(0, old);
  // Reservations only grow (each is at least the one before), so the list stays in order.
  const at = grants.length < perMinute ? nowMs : Math.max(nowMs, grants[grants.length - perMinute]! + MINUTE_MS);
  const waitMs = at - nowMs;
  if (waitMs > maxWait) return { ok: false, retryInMs: waitMs };
  grants.push(at);
  return { ok: true, waitMs };
}

/**
 * The budget's clock. Production reads the wall clock; the fleet simulation
 * (test/worker/fleet/) puts its simulated clock here, as it does for the
 * fleet's (src/fleet/time.ts), so a minute's limit is a simulated minute.
 */
export const aiBudgetTime = {
  now(): number {
    return Date.now();
  },
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  },
};

/**
 * The one budget (instance "account"). Each task's window is kept in the
 * object's storage as well as its memory, so a deploy's reset or an
 * eviction does not forget the minute's calls and let a second minute's
 * worth through.
 */
export class AiBudget extends DurableObject<Env> {
  private readonly windows = new Map<string, CallWindow>();

  take(task: AiTask, perMinute: number, maxWait: number): TakeResult {
    const key = `${task}:${perMinute}`;
    let window = this.windows.get(key);
    if (!window) {
      const stored = this.ctx.storage.kv.get<number[]>(key);
      window = { grants: Array.isArray(stored) ? stored : [] };
      this.windows.set(key, window);
    }
    const turn = takeFrom(window, perMinute, aiBudgetTime.now(), maxWait);
    if (turn.ok) this.ctx.storage.kv.put(key, window.grants);
    return turn;
  }
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
      if (turn.waitMs > 0) await aiBudgetTime.sleep(turn.waitMs);
      return inner.run(model, input, options);
    },
  };
}
