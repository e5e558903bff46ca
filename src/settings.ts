/**
 * The Worker's own settings read from its variables (wrangler.toml [vars],
 * .dev.vars, secrets): limits handed to the engine, deadlines, token lifetime,
 * and the engine channel's keys (whether they are fit to sign anything, and
 * the imported signing key). Every layer reads them from here, so none has
 * to import another for a number.
 */
import { importSigningKey, signingKeyProblem, verifyKeyFor, type EngineLimits } from "#contract";

/** Host the Container's outbound handler answers with the Worker's app (container.ts). */
export const INTERNAL_CALLBACK_HOST = "clipjobs.internal";

/** Dispatch refuses to sign anything with a missing or weak key (and submission answers 503). */
export class EngineMisconfiguredError extends Error {
  override readonly name = "EngineMisconfiguredError";
}

/** CALLBACK_TOKEN_SECRET must have at least this many bytes. */
export const MIN_CALLBACK_SECRET_BYTES = 32;

/** Example values that must never sign production tokens, whatever their length. */
const EXAMPLE_SECRETS = new Set(["local-callback-token-secret-change-me-0123456789"]);

/** Why this deployment's engine keys (ENGINE_SIGNING_KEY, CALLBACK_TOKEN_SECRET) cannot be used, or null. */
export function engineConfigProblem(env: Env): string | null {
  const signing = signingKeyProblem(env.ENGINE_SIGNING_KEY);
  if (signing) return signing;
  const secret = env.CALLBACK_TOKEN_SECRET;
  if (!secret) return "CALLBACK_TOKEN_SECRET is not set";
  if (EXAMPLE_SECRETS.has(secret)) return "CALLBACK_TOKEN_SECRET is the example value from .dev.vars.example";
  if (new TextEncoder().encode(secret).length < MIN_CALLBACK_SECRET_BYTES) {
    return `CALLBACK_TOKEN_SECRET must be at least ${MIN_CALLBACK_SECRET_BYTES} bytes (e.g. openssl rand -base64 32)`;
  }
  return null;
}

/** Which variable engineConfigProblem is about (what submission's 503 names). */
export function misconfiguredVariable(problem: string): string {
  return problem.startsWith("CALLBACK_TOKEN_SECRET") ? "CALLBACK_TOKEN_SECRET" : "ENGINE_SIGNING_KEY";
}

const signingKeys = new Map<string, Promise<CryptoKey>>();

/** ENGINE_SIGNING_KEY imported (once per isolate): signs StartJob and cancel. */
export function engineSigningKey(env: Env): Promise<CryptoKey> {
  let key = signingKeys.get(env.ENGINE_SIGNING_KEY);
  if (!key) {
    key = importSigningKey(env.ENGINE_SIGNING_KEY);
    signingKeys.set(env.ENGINE_SIGNING_KEY, key);
  }
  return key;
}

/** ENGINE_VERIFY_KEY for the engine's environment: the public half of ENGINE_SIGNING_KEY. */
export function engineVerifyKey(env: Env): Promise<string> {
  return verifyKeyFor(env.ENGINE_SIGNING_KEY);
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

