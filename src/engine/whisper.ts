/**
 * Speech-to-text on Workers AI (`@cf/openai/whisper-large-v3-turbo`) for one
 * audio chunk the engine sent over the channel. The model's documented answer
 * (text, segments with per-word start/end, transcription_info.language, vtt)
 * becomes the contract's TranscribeResult, with times moved from chunk time to
 * source time. Model errors and timeouts are retried inside a time budget that
 * ends before the engine's own callback timeout (30 s), so the engine sees one
 * answer per chunk, never a duplicate model run caused by its own retry.
 */
import { z } from "zod";
import type { TranscribeResult, TranscriptWord } from "#contract";
import { DEFAULT_RETRY_POLICY, retrying, type RetryPolicy } from "./ai-retry.ts";
import { withTimeout } from "../lib/timeout.ts";
import type { AiRunner } from "../ai/runner.ts";

export const WHISPER_MODEL = "@cf/openai/whisper-large-v3-turbo";

export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./ai-retry.ts";

/** This deployment has no speech-to-text (no AI binding, or `wrangler dev --local`'s placeholder). */
export class TranscriptionUnavailable extends Error {
  override readonly name = "TranscriptionUnavailable";
}

/** The model kept failing (errors, timeouts, answers of the wrong shape) for the whole retry policy. */
export class TranscriptionFailed extends Error {
  override readonly name = "TranscriptionFailed";
}

/** The model's output as documented (workers-types Ai_Cf_Openai_Whisper_Large_V3_Turbo_Output). */
const WhisperOutput = z
  .object({
    text: z.string(),
    transcription_info: z.object({ language: z.string().optional() }).loose().optional(),
    segments: z
      .array(
        z
          .object({
            start: z.number().optional(),
            end: z.number().optional(),
            text: z.string().optional(),
            words: z
              .array(z.object({ word: z.string().optional(), start: z.number().optional(), end: z.number().optional() }).loose())
              .optional(),
          })
          .loose(),
      )
      .optional(),
    vtt: z.string().optional(),
  })
  .loose();
type WhisperOutput = z.infer<typeof WhisperOutput>;

interface TimedText {
  text: string;
  start: number;
  end: number;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function finite(value: number | undefined): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Spreads a span's words over its time by their length: the best guess when the model gave no word times. */
function spreadWords(span: TimedText): TimedText[] {
  const words = span.text.split(/\s+/).filter((w) => w.length > 0);
  const total = words.reduce((sum, w) => sum + w.length, 0);
  const length = Math.max(0, span.end - span.start);
  let at = span.start;
  return words.map((text) => {
    const start = at;
    at += total > 0 ? (length * text.length) / total : 0;
    return { text, start, end: at };
  });
}

function vttTime(stamp: string): number | null {
  const match = /^(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})$/.exec(stamp.trim());
  if (!match) return null;
  const [, h = "0", m = "0", s = "0", ms = "0"] = match;
  return Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(ms.padEnd(3, "0")) / 1000;
}

/** Cues of the model's `vtt` output: used only when it gave no segments. */
function vttCues(vtt: string): TimedText[] {
  const cues: TimedText[] = [];
  for (const block of vtt.replace(/\r/g, "").split(/\n\n+/)) {
    const lines = block.split("\n");
    const timing = lines.findIndex((line) => line.includes("-->"));
    if (timing < 0) continue;
    const [from = "", to = ""] = lines[timing]!.split("-->");
    const start = vttTime(from);
    const end = vttTime(to.trim().split(/\s+/)[0] ?? "");
    const text = lines.slice(timing + 1).join(" ").trim();
    if (start !== null && end !== null && text) cues.push({ text, start, end });
  }
  return cues;
}

/** Words with chunk-relative times: per-word times when given, else spread over segments, cues or the chunk. */
function chunkWords(output: WhisperOutput, chunkSeconds: number): TimedText[] {
  const words: TimedText[] = [];
  for (const segment of output.segments ?? []) {
    const timed = (segment.words ?? []).filter((w) => w.word !== undefined && finite(w.start) && finite(w.end));
    if (timed.length > 0) {
      for (const w of timed) words.push({ text: w.word ?? "", start: w.start ?? 0, end: w.end ?? 0 });
    } else if (segment.text && finite(segment.start) && finite(segment.end)) {
      words.push(...spreadWords({ text: segment.text, start: segment.start, end: segment.end }));
    }
  }
  if (words.length > 0 || (output.segments ?? []).length > 0) return words;
  const cues = output.vtt ? vttCues(output.vtt) : [];
  if (cues.length > 0) return cues.flatMap(spreadWords);
  return spreadWords({ text: output.text, start: 0, end: chunkSeconds });
}

/** Maps the model's answer to source time: trimmed words, times clamped to the chunk, in order. */
export function toTranscribeResult(output: WhisperOutput, chunkStart: number, chunkSeconds: number): TranscribeResult {
  const clamp = (t: number): number => Math.min(Math.max(t, 0), chunkSeconds);
  const words: TranscriptWord[] = chunkWords(output, chunkSeconds)
    .map((w) => ({ text: w.text.trim(), start: clamp(w.start), end: clamp(w.end) }))
    .filter((w) => w.text.length > 0)
    .map((w) => ({ text: w.text, start: round3(chunkStart + w.start), end: round3(chunkStart + Math.max(w.start, w.end)) }))
    .sort((a, b) => a.start - b.start);
  const language = output.transcription_info?.language?.trim().toLowerCase();
  return { language: language ? language : null, words };
}

/** Base64 of binary data; btoa takes a binary string, built in slices to keep the argument list short. */
function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

async function runOnce(ai: AiRunner, base64: string, timeoutMs: number, language: string | null): Promise<WhisperOutput> {
  // `language`: the job's hint; without it the model detects the language.
  const answer: unknown = await withTimeout(timeoutMs, (signal) =>
    ai.run(WHISPER_MODEL, { audio: base64, task: "transcribe", ...(language ? { language } : {}) }, { signal }),
  );
  const parsed = WhisperOutput.safeParse(answer);
  if (!parsed.success) throw new Error("the model answered in an unexpected shape");
  return parsed.data;
}

/**
 * Transcribes one WAV chunk. Throws TranscriptionUnavailable without an AI
 * binding (or with the local placeholder) and TranscriptionFailed once the
 * retry policy is spent.
 */
export async function transcribeChunk(
  ai: AiRunner | undefined,
  wav: Uint8Array,
  chunkStart: number,
  chunkSeconds: number,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  /** The job's spoken-language hint, in Whisper's code. */
  language: string | null = null,
): Promise<TranscribeResult> {
  if (!ai) throw new TranscriptionUnavailable("Workers AI is not configured (no AI binding, and no WORKERS_AI_ACCOUNT_ID with WORKERS_AI_TOKEN).");
  const base64 = toBase64(wav);
  const outcome = await retrying(policy, async (timeoutMs) => toTranscribeResult(await runOnce(ai, base64, timeoutMs, language), chunkStart, chunkSeconds));
  if (outcome.ok) return outcome.value;
  if (outcome.local) throw new TranscriptionUnavailable("Workers AI is not reachable from local development (set WORKERS_AI_ACCOUNT_ID and WORKERS_AI_TOKEN to use its REST API).");
  const failures = outcome.failures;
  throw new TranscriptionFailed(`Speech-to-text failed ${failures.length} times: ${failures.at(-1) ?? "no attempt fit the time budget"}`);
}
