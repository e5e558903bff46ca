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

/**
 * The Workers AI text-generation model that judges clips (docs/judgement.md):
 * JUDGE_MODEL, default Llama 3.3 70B (fp8, fast), whose model page documents
 * JSON mode (`response_format: {type: "json_schema", json_schema}`) and a
 * 24,000-token context. Another model must take the same messages input and
 * JSON mode; a value not shaped like a Workers AI model name is ignored.
 */
export const DEFAULT_JUDGE_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";
const MODEL_NAME = /^@(cf|hf)\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/;

export function judgeModel(env: Env): string {
  const configured = env.JUDGE_MODEL?.trim() ?? "";
  return MODEL_NAME.test(configured) ? configured : DEFAULT_JUDGE_MODEL;
}
