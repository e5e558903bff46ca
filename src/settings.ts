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

