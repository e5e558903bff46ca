/**
 * Source 1: Workers AI speech-to-text, reached through the Worker (the engine
 * holds no Cloudflare credential). The speech parts of the audio are cut into
 * chunks (chunk-plan.ts), each cut from the analysis's PCM (pcm-chunk.ts) or
 * else extracted by ffmpeg as mono 16 kHz PCM WAV, and posted to
 * the job's /transcribe route, up to TRANSCRIBE_CONCURRENCY at a time while
 * the next chunk is extracted (chunk-lanes.ts); the answers (word times
 * already in source seconds) are stitched in chunk order, whatever order they
 * arrive in, so a word heard at a seam is kept once.
 *
 * Outcomes: every chunk answered -> words; 503 before any chunk succeeded ->
 * the deployment has no speech-to-text ("unavailable", other sources are
 * tried); a 502, a failed chunk after the reporter's retries, or a 503 after
 * a success -> "failed" (the job goes on with the other sources, or without a
 * transcript). The first such answer stops the chunks still in flight or
 * being extracted; so does a cancel.
 */
import { rm } from "node:fs/promises";
import type { TranscriptWord } from "#contract";
import type { SpeechPcm } from "../analyse/measure.ts";
import { JobAborted } from "../shared/errors.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import type { JobReporter, TranscribeOutcome } from "../channel/report.ts";
import type { SourceInfo } from "../shared/types.ts";
import { stitchChunks } from "./build.ts";
import { ChunkLanes } from "./chunk-lanes.ts";
import { chunkArgs, planChunks, type Span } from "./chunk-plan.ts";
import { cutWavFromPcm, pcmServes } from "./pcm-chunk.ts";

/**
 * Chunk requests in flight at once. A 5-minute talk is about 11 chunks of
 * 30 s and each model call takes a second or two: 4 lanes cut the 11 calls
 * one after another to 3 rounds, and more lanes gain little (6 lanes: 2
 * rounds) while the peak rate grows with every one. Workers AI allows this
 * model 720 requests a minute per Cloudflare account, shared by every engine
 * of the fleet: at about 1.5 s a call, 4 lanes make one job send up to 160 a
 * minute on a long source (sequential: 40), so about four engines
 * transcribing at the same moment stay under the limit; a call refused
 * beyond it is retried by the Worker only within its 25 s budget (0.5 s, then
 * 1 s later, ai-retry.ts) before the chunk, and with it the Workers AI
 * transcript, fails. Each request also uploads up to 1.2 MB and must be
 * answered within the engine's 30 s callback timeout: four uploads at once
 * are under 5 MB on the engine's uplink.
 */
export const TRANSCRIBE_CONCURRENCY = 4;

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
  /** The analysis's PCM: chunks are cut from it where it serves (pcm-chunk.ts), else extracted by ffmpeg. */
  pcm?: SpeechPcm | null;
  /** Chunk requests in flight at once; TRANSCRIBE_CONCURRENCY unless told (the bench compares 1). */
  concurrency?: number;
}

interface AnsweredChunk extends Span {
  words: TranscriptWord[];
  language: string | null;
}

/** Words outside the chunk's own span are not trusted (a model hallucinating past the audio). */
function chunkWords(chunk: Span, words: TranscriptWord[]): TranscriptWord[] {
  return words
    .filter((w) => Number.isFinite(w.start) && Number.isFinite(w.end) && w.end >= w.start && w.start >= chunk.start - 0.5 && w.end <= chunk.end + 0.5 && w.text.trim() !== "")
    .map((w) => ({ ...w, text: w.text.trim() }));
}

/** The language most chunks heard; a tie goes to the one heard first in the audio (chunk order, not arrival order). */
function votedLanguage(answered: AnsweredChunk[]): string | null {
  const votes = new Map<string, number>();
  for (const chunk of answered) if (chunk.language) votes.set(chunk.language, (votes.get(chunk.language) ?? 0) + 1);
  return [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
}

export async function transcribeWithWorkersAi(req: WorkersAiRequest): Promise<WorkersAiOutcome> {
  const chunks = planChunks(req.source.durationSeconds, req.speech);
  if (chunks.length === 0) return { kind: "failed", reason: "the audio has no speech to transcribe" };
  const lanes = new ChunkLanes(req.signal);
  const answered: (AnsweredChunk | undefined)[] = chunks.map(() => undefined);
  let succeeded = 0;
  /** The first answer that ends the stage before every chunk is in. */
  let verdict: Exclude<WorkersAiOutcome, { kind: "ok" }> | null = null;
  /** The reporter fell silent under a request (a cancel, or the Worker no longer holds the job active). */
  let silenced: JobAborted | null = null;
  const end = (outcome: Exclude<WorkersAiOutcome, { kind: "ok" }>) => {
    verdict ??= outcome;
    lanes.halt();
  };

  const pcm = pcmServes(req.source, req.pcm) ? req.pcm : null;
  const extract = async (index: number): Promise<string | null> => {
    const wav = req.chunkPath(index);
    if (pcm) {
      try {
        if (await cutWavFromPcm(pcm, chunks[index]!, wav)) return wav;
      } catch (error) {
        await rm(wav, { force: true });
        throw error;
      }
    }
    let extracted;
    try {
      extracted = await req.runner.ffmpeg({
        args: chunkArgs(req.source, chunks[index]!, wav),
        inputs: [req.source.path],
        outputs: [wav],
        timeoutMs: EXTRACT_TIMEOUT_MS,
        signal: lanes.stop,
      });
    } catch (error) {
      // Stopped (or past its time limit) mid-write: no half WAV stays behind.
      await rm(wav, { force: true });
      throw error;
    }
    if (extracted.exitCode === 0) return wav;
    await rm(wav, { force: true });
    end({ kind: "failed", reason: "the audio could not be prepared for speech-to-text" });
    return null;
  };

  const ask = async (index: number, wav: string): Promise<void> => {
    const chunk = chunks[index]!;
    let outcome: TranscribeOutcome;
    try {
      outcome = await req.reporter.transcribe(wav, chunk.start, lanes.stop);
    } catch (error) {
      if (error instanceof JobAborted) silenced ??= error;
      else if (!lanes.stop.aborted) end({ kind: "failed", reason: "speech-to-text did not answer" });
      lanes.halt();
      return;
    }
    // The stage already ended (or the job stopped): a late answer changes nothing.
    if (lanes.stop.aborted) return;
    if (outcome.kind === "unavailable") {
      // 503 means the deployment has no speech-to-text (local development), which holds for every
      // chunk or for none. With several chunks in flight any of them may answer first, so a 503
      // before any chunk succeeded is "unavailable" (the other sources are tried), as chunk 0's was
      // when they went one by one; after a success, speech-to-text went away mid-job: "failed".
      end(succeeded === 0 ? { kind: "unavailable" } : { kind: "failed", reason: "speech-to-text became unavailable mid-job" });
      return;
    }
    if (outcome.kind === "failed") {
      end({ kind: "failed", reason: "speech-to-text failed after retries" });
      return;
    }
    answered[index] = { ...chunk, words: chunkWords(chunk, outcome.result.words), language: outcome.result.language };
    succeeded += 1;
    // Progress counts answers, not positions: it grows with every chunk, whatever its index.
    req.onProgress(succeeded / chunks.length);
  };

  await lanes.run({
    count: chunks.length,
    concurrency: req.concurrency ?? TRANSCRIBE_CONCURRENCY,
    prepare: extract,
    send: ask,
    // A chunk's WAV is deleted once answered (or stopped): at most concurrency + 1 are on disk.
    discard: (wav) => rm(wav, { force: true }),
  });
  req.signal.throwIfAborted();
  if (silenced) throw silenced;
  if (verdict) return verdict;
  const all = answered.filter((chunk): chunk is AnsweredChunk => chunk !== undefined);
  if (all.length !== chunks.length) return { kind: "failed", reason: "speech-to-text did not answer every chunk" };
  return { kind: "ok", words: stitchChunks(all), language: votedLanguage(all), chunks: chunks.length };
}
