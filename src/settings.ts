/**
 * The Worker's own settings read from its variables (wrangler.toml [vars],
 * .dev.vars, secrets): limits handed to the engine, deadlines, token lifetime,
 * and whether the engine channel's secret is fit to sign anything. Every
 * layer reads them from here, so none has to import another for a number.
 */
import { engineSecretProblem, type EngineLimits } from "#contract";

/** Host the Container's outbound handler answers with the Worker's app (container.ts). */
export const INTERNAL_CALLBACK_HOST = "clipjobs.internal";

/** Dispatch refuses to sign anything with a weak secret (and submission answers 503). */
export class EngineMisconfiguredError extends Error {
  override readonly name = "EngineMisconfiguredError";
}

/** Example values that must never sign production tokens, whatever their length. */
const EXAMPLE_SECRETS = new Set(["local-engine-secret-change-me-0123456789"]);

/** Why this deployment's ENGINE_SECRET cannot be used, or null. */
export function engineConfigProblem(env: Env): string | null {
  if (EXAMPLE_SECRETS.has(env.ENGINE_SECRET)) return "ENGINE_SECRET is the example value from .dev.vars.example";
  return engineSecretProblem(env.ENGINE_SECRET);
}

function positiveNumber(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

export function engineLimits(env: Env): EngineLimits {
  return {
    max_source_bytes: Math.floor(positiveNumber(env.MAX_SOURCE_BYTES, 4 * 1024 ** 3)),
    max_source_seconds: positiveNumber(env.MAX_SOURCE_SECONDS, 3 * 3600),
    download_timeout_seconds: positiveNumber(env.DOWNLOAD_TIMEOUT_SECONDS, 1800),
  };
}

/** Origin the engine calls back to; handed to the engine through its environment, never a request. */
export function callbackBase(env: Env): string {
  return env.CALLBACK_BASE || `http://${INTERNAL_CALLBACK_HOST}`;
}

export function tokenTtlSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.ENGINE_TOKEN_TTL_SECONDS, 6 * 3600));
}

export function silenceTimeoutSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.ENGINE_SILENCE_TIMEOUT_SECONDS, 180));
}

export function maxQueueSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.MAX_QUEUE_SECONDS, 24 * 3600));
}


/**
 * Engines the fleet grants at once: ENGINE_MAX_INSTANCES, and never more
 * than the account's vCPU allows (ENGINE_VCPU_LIMIT / ENGINE_INSTANCE_VCPU;
 * Cloudflare's account limit is 1,500 concurrent vCPU and a standard-4 has
 * 4, so 375). ENGINE_MAX_INSTANCES stays below the container's
 * `max_instances` by a headroom (wrangler.toml; a test checks), because the
 * platform counts instances the fleet can only estimate: stopping ones.
 */
export function fleetCapacity(env: Env): number {
  const configured = Math.floor(positiveNumber(env.ENGINE_MAX_INSTANCES, 1));
  const byVcpu = Math.floor(positiveNumber(env.ENGINE_VCPU_LIMIT, 1500) / positiveNumber(env.ENGINE_INSTANCE_VCPU, 4));
  return Math.max(1, Math.min(configured, byVcpu));
}

/**
 * How long a job keeps retrying a start that failed for reasons not its own
 * (no instance, rate limits, a port that did not open, a stopping
 * instance): twice a rollout's 15-minute grace by default, so a rollout
 * never fails a job.
 */
export function engineStartBudgetSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.ENGINE_START_BUDGET_SECONDS, 1800));
}

/**
 * How long an instance may keep its slot after SIGTERM: the platform kills
 * it after 15 minutes; a minute more covers the platform's own bookkeeping.
 * Used only when the exit notice (ClipEngine.onStop) is lost.
 */
export function engineStopGraceSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.ENGINE_STOP_GRACE_SECONDS, 16 * 60));
}
