/**
 * The one door of every Workers AI call the Worker makes (speech-to-text,
 * translation, embeddings, judgement): an AiRunner, the structural shape of
 * the `AI` binding's `run`. The engine-channel modules take an AiRunner, so
 * the binding, the REST transport and a test's stand-in are interchangeable.
 *
 * Which transport this deployment uses (aiRunner):
 *   - WORKERS_AI_ACCOUNT_ID and WORKERS_AI_TOKEN both set: Workers AI's REST
 *     API (rest.ts) at WORKERS_AI_BASE_URL, as the local stack does, where
 *     `wrangler dev --local` has no working binding;
 *   - else the `AI` binding when there is one (production);
 *   - else none: the routes answer their documented *_unavailable problems.
 */
import { restAiRunner, DEFAULT_WORKERS_AI_BASE_URL } from "./rest.ts";

import type { AiRunner } from "./ai-runner.ts";

export type { AiRunner, AiRunOptions } from "./ai-runner.ts";

/** The settings that choose the transport (wrangler.toml [vars], .dev.vars, secrets). */
export interface AiTransportSettings {
  AI?: unknown;
  WORKERS_AI_ACCOUNT_ID?: string;
  WORKERS_AI_TOKEN?: string;
  WORKERS_AI_BASE_URL?: string;
}

export type AiTransportKind = "rest" | "binding" | "none";

/** Which transport aiRunner picks for these settings. */
export function aiTransportKind(env: AiTransportSettings): AiTransportKind {
  if (env.WORKERS_AI_ACCOUNT_ID?.trim() && env.WORKERS_AI_TOKEN?.trim()) return "rest";
  return isRunner(env.AI) ? "binding" : "none";
}

function isRunner(value: unknown): value is AiRunner {
  return typeof value === "object" && value !== null && typeof (value as { run?: unknown }).run === "function";
}

/** The binding's own `run`, called as a method (workerd's bindings need their `this`). */
function bindingRunner(binding: AiRunner): AiRunner {
  return { run: (model, input, options) => binding.run(model, input, options) };
}

/**
 * The AiRunner of this environment, or undefined when it has none. `fetcher`
 * is the REST transport's fetch (tests pass one that reaches a stand-in).
 */
export function aiRunner(env: AiTransportSettings, fetcher?: typeof fetch): AiRunner | undefined {
  switch (aiTransportKind(env)) {
    case "rest":
      return restAiRunner({
        baseUrl: env.WORKERS_AI_BASE_URL?.trim() || DEFAULT_WORKERS_AI_BASE_URL,
        accountId: env.WORKERS_AI_ACCOUNT_ID!.trim(),
        token: env.WORKERS_AI_TOKEN!.trim(),
        // workerd's fetch must be called unbound from any object (else "Illegal invocation").
        fetcher: fetcher ?? ((input, init) => fetch(input, init)),
      });
    case "binding":
      return bindingRunner(env.AI as AiRunner);
    case "none":
      return undefined;
  }
}
