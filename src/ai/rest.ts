/**
 * Workers AI over its REST API (developers.cloudflare.com/workers-ai/
 * get-started/rest-api): `POST {base}/accounts/{account_id}/ai/run/{model}`
 * with `Authorization: Bearer {token}` and the model's input as the JSON
 * body (whisper-large-v3-turbo takes its audio as a base64 `audio` string,
 * exactly as over the binding). Every answer is Cloudflare's v4 envelope
 * `{result, success, errors: [{code, message}], messages}`: the model's
 * output is `result` when `success` is true; anything else (a non-2xx
 * status, `success: false`, a body that is not the envelope) throws a
 * WorkersAiError carrying the status and the API's errors.
 */
import { z } from "zod";
import type { AiRunner } from "./ai-runner.ts";
import { WorkersAiError } from "./errors.ts";

export const DEFAULT_WORKERS_AI_BASE_URL = "https://api.cloudflare.com/client/v4";

export interface RestTransportOptions {
  baseUrl: string;
  accountId: string;
  token: string;
  fetcher: typeof fetch;
}

const ApiMessage = z.object({ code: z.number(), message: z.string() }).loose();
const Envelope = z
  .object({
    success: z.boolean(),
    result: z.unknown().optional(),
    errors: z.array(ApiMessage).optional().default([]),
    messages: z.array(z.unknown()).optional(),
  })
  .loose();

/** The run URL of a model: each part of `@cf/vendor/name` stays a path segment, escaped on its own (the `@` kept, as the docs write it). */
export function runUrl(baseUrl: string, accountId: string, model: string): string {
  const base = baseUrl.replace(/\/+$/, "");
  const path = model
    .split("/")
    .map((part) => encodeURIComponent(part).replace(/^%40/, "@"))
    .join("/");
  return `${base}/accounts/${encodeURIComponent(accountId)}/ai/run/${path}`;
}

async function readEnvelope(response: Response): Promise<z.infer<typeof Envelope> | null> {
  const text = await response.text();
  try {
    const parsed = Envelope.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function restAiRunner(options: RestTransportOptions): AiRunner {
  return {
    async run(model, input, runOptions) {
      const response = await options.fetcher(runUrl(options.baseUrl, options.accountId, model), {
        method: "POST",
        headers: { Authorization: `Bearer ${options.token}`, "Content-Type": "application/json" },
        body: JSON.stringify(input),
        signal: runOptions?.signal,
      });
      const envelope = await readEnvelope(response);
      if (!response.ok) {
        throw new WorkersAiError(response.status, envelope?.errors ?? [], `Workers AI answered HTTP ${response.status}`);
      }
      if (!envelope) throw new WorkersAiError(502, [], "Workers AI answered a body that is not its JSON envelope");
      // A 2xx that says it failed names no status of its own: counted as the service failing (retryable).
      if (!envelope.success) throw new WorkersAiError(502, envelope.errors, "Workers AI answered success: false");
      return envelope.result;
    },
  };
}
