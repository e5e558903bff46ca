/**
 * The Workers AI usage a job causes, recorded on the job (jobs.ai_* columns,
 * shown as `ai_usage` in its API representation): model calls, tokens in and
 * out (the answer's own `usage` counts when it has them, as text-generation
 * models' answers do; else estimated at four characters a token), seconds of
 * audio transcribed, and neurons estimated at the published prices
 * (pricing.ts).
 *
 * jobAiRunner is what an engine-channel route calls the models through: the
 * deployment's transport (runner.ts), held to the account-wide budget every
 * engine shares (budget.ts), and metered for its job.
 */
import type { AiRunner } from "./runner.ts";
import { aiRunner } from "./runner.ts";
import { estimateNeurons } from "./pricing.ts";
import { budgetedRunner } from "./budget.ts";

export interface AiUsage {
  model: string;
  calls: number;
  tokensIn: number;
  tokensOut: number;
  /** Seconds of audio sent (speech-to-text). */
  audioSeconds?: number;
  /** Estimated neurons; default: from the model's published price. */
  neurons?: number;
}

/** About four characters a token in the scripts these models mostly read: an estimate, said so wherever shown. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Mono 16 kHz 16-bit PCM WAV (the engine's chunks): bytes of the base64 audio after its 44-byte header. */
function audioSecondsOf(base64: string): number {
  const bytes = Math.floor((base64.length * 3) / 4);
  return Math.max(0, bytes - 44) / 32_000;
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(textOf).join(" ");
  return "";
}

function inputText(input: Record<string, unknown>): string {
  const messages = Array.isArray(input.messages) ? input.messages.map((m) => textOf((m as { content?: unknown } | null)?.content)).join(" ") : "";
  return [textOf(input.text), textOf(input.prompt), messages].filter((t) => t !== "").join(" ");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (typeof output !== "object" || output === null) return "";
  const o = output as Record<string, unknown>;
  const response = typeof o.response === "string" ? o.response : o.response !== undefined ? JSON.stringify(o.response) : "";
  return [response, textOf(o.translated_text), textOf(o.text)].filter((t) => t !== "").join(" ");
}

function reportedTokens(output: unknown): { in: number; out: number } | null {
  const usage = typeof output === "object" && output !== null ? (output as { usage?: unknown }).usage : undefined;
  if (typeof usage !== "object" || usage === null) return null;
  const { prompt_tokens: tokensIn, completion_tokens: tokensOut } = usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return typeof tokensIn === "number" && typeof tokensOut === "number" ? { in: tokensIn, out: tokensOut } : null;
}

/** What one answered call used, from its input and its answer. */
export function measureCall(model: string, input: object, output: unknown): Required<AiUsage> {
  const fields = input as Record<string, unknown>;
  const audioSeconds = typeof fields.audio === "string" ? audioSecondsOf(fields.audio) : 0;
  const reported = reportedTokens(output);
  const tokensIn = reported?.in ?? estimateTokens(inputText(fields));
  const tokensOut = reported?.out ?? estimateTokens(outputText(output));
  return { model, calls: 1, tokensIn, tokensOut, audioSeconds, neurons: estimateNeurons(model, tokensIn, tokensOut, audioSeconds) };
}

/**
 * Adds usage to a job's record (the judgement's module calls this too, or
 * simply runs its model through jobAiRunner). A job that is gone records
 * nothing.
 */
export async function recordAiUsage(env: Pick<Env, "DB">, jobId: string, usage: AiUsage): Promise<void> {
  const audioSeconds = usage.audioSeconds ?? 0;
  const neurons = usage.neurons ?? estimateNeurons(usage.model, usage.tokensIn, usage.tokensOut, audioSeconds);
  await env.DB.prepare(
    `UPDATE jobs SET ai_calls = ai_calls + ?1, ai_tokens_in = ai_tokens_in + ?2, ai_tokens_out = ai_tokens_out + ?3,
       ai_audio_seconds = ai_audio_seconds + ?4, ai_neurons = ai_neurons + ?5 WHERE id = ?6`,
  )
    .bind(usage.calls, usage.tokensIn, usage.tokensOut, audioSeconds, neurons, jobId)
    .run();
}

/** A runner that reports each answered call's usage to `record`; failed calls are not billed and not recorded. */
export function meteredRunner(inner: AiRunner, record: (usage: Required<AiUsage>) => Promise<void>): AiRunner {
  return {
    async run(model, input, options) {
      const output = await inner.run(model, input, options);
      await record(measureCall(model, input, output));
      return output;
    },
  };
}

/**
 * The runner an engine-channel route uses for `jobId`: this deployment's
 * transport, every answered call recorded on the job. Audio seconds are
 * counted by the transcription allowance (allowance.ts) before the call, so
 * they are not added again here.
 */
export function jobAiRunner(env: Env, jobId: string, fetcher?: typeof fetch): AiRunner | undefined {
  const transport = aiRunner(env, fetcher);
  if (!transport) return undefined;
  return meteredRunner(budgetedRunner(env, transport), (usage) => recordAiUsage(env, jobId, { ...usage, audioSeconds: 0 }));
}
