/**
 * Source 1: Workers AI speech-to-text, reached through the Worker (the engine
 * holds no Cloudflare credential). The speech parts of the audio are cut into
 * chunks of at most TRANSCRIBE_MAX_CHUNK_SECONDS with a small overlap, each
 * extracted as mono 16 kHz PCM WAV and posted to the job's /transcribe route;
 * the answers (word times already in source seconds) are stitched so a word
 * heard at a seam is kept once.
 *
 * Outcomes: every chunk answered -> words; 503 on the first chunk -> the
 * deployment has no speech-to-text ("unavailable", other sources are tried);
 * a 502 or a failed chunk after the reporter's retries -> "failed" (the job
 * goes on with the other sources, or without a transcript).
 */
import type { TranscriptWord } from "#contract";
import { JobAborted } from "../errors.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import type { JobReporter } from "../report.ts";
import type { SourceInfo } from "../types.ts";
import { stitchChunks } from "./build.ts";
import { chunkArgs, planChunks, type Span } from "./chunk-plan.ts";

const EXTRACT_TIMEOUT_MS = 60_000;

export type WorkersAiOutcome =
  | { kind: "ok"; words: TranscriptWord[]; language: string | null; chunks: number }
  | { kind: "unavailable" }
  | { kind: "failed"; reason: string };

export interface WorkersAiRequest {
  runner: FfmpegRunner;
  reporter: JobReporter;
  source: SourceInfo;
  speech: Span[] | null;
  chunkPath: (index: number) => string;
  signal: AbortSignal;
  onProgress: (fraction: number) => void;
}

export async function transcribeWithWorkersAi(req: WorkersAiRequest): Promise<WorkersAiOutcome> {
  const chunks = planChunks(req.source.durationSeconds, req.speech);
  if (chunks.length === 0) return { kind: "failed", reason: "the audio has no speech to transcribe" };
  const answered: { start: number; end: number; words: TranscriptWord[] }[] = [];
  const languages = new Map<string, number>();
  for (const [index, chunk] of chunks.entries()) {
    req.signal.throwIfAborted();
    const wav = req.chunkPath(index);
    const extracted = await req.runner.ffmpeg({
      args: chunkArgs(req.source, chunk, wav),
      inputs: [req.source.path],
      outputs: [wav],
      timeoutMs: EXTRACT_TIMEOUT_MS,
      signal: req.signal,
    });
    if (extracted.exitCode !== 0) return { kind: "failed", reason: "the audio could not be prepared for speech-to-text" };
    let outcome;
    try {
      outcome = await req.reporter.transcribe(wav, chunk.start);
    } catch (error) {
      if (error instanceof JobAborted || req.signal.aborted) throw error;
      return { kind: "failed", reason: "speech-to-text did not answer" };
    }
    if (outcome.kind === "unavailable") return index === 0 ? { kind: "unavailable" } : { kind: "failed", reason: "speech-to-text became unavailable mid-job" };
    if (outcome.kind === "failed") return { kind: "failed", reason: "speech-to-text failed after retries" };
    // Words outside the chunk's own span are not trusted (a model hallucinating past the audio).
    const words = outcome.result.words.filter((w) => Number.isFinite(w.start) && Number.isFinite(w.end) && w.end >= w.start && w.start >= chunk.start - 0.5 && w.end <= chunk.end + 0.5 && w.text.trim() !== "");
    answered.push({ ...chunk, words: words.map((w) => ({ ...w, text: w.text.trim() })) });
    if (outcome.result.language) languages.set(outcome.result.language, (languages.get(outcome.result.language) ?? 0) + 1);
    req.onProgress((index + 1) / chunks.length);
  }
  const language = [...languages.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  return { kind: "ok", words: stitchChunks(answered), language, chunks: chunks.length };
}
