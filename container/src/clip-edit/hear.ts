/**
 * The parts of an edit's span that the job never transcribed (outside its
 * time_range), heard with the job's own speech-to-text path
 * (transcribeWithWorkersAi over the channel's transcribe route) and merged
 * with the words the Worker sent. The sent words (corrections applied) are
 * kept as they are; a heard word counts only when it starts inside an
 * uncovered part. When speech-to-text is unavailable, refused or fails, the
 * edit goes on with the sent words and says why.
 */
import type { ClipEdit, Transcript, TranscriptWord } from "#contract";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import type { JobReporter } from "../channel/report.ts";
import { JobAborted, errorMessage } from "../shared/errors.ts";
import { log } from "../shared/log.ts";
import type { SourceInfo } from "../shared/types.ts";
import { buildTranscript } from "../transcript/build.ts";
import { transcribeWithWorkersAi } from "../transcript/workers-ai.ts";
import type { Span } from "./span.ts";
import { editTranscript } from "./words.ts";

export interface HeardEdit {
  /** The sent words and the heard ones, in time order; null when there are none. */
  transcript: Transcript | null;
  /** How many words were heard in the uncovered parts. */
  heard: number;
  /** Why part of the span has no words (null when nothing was left unheard). */
  reason: string | null;
}

/** The uncovered parts, cut to the rendered span, in order, without empty ones. */
export function uncoveredParts(edit: Pick<ClipEdit, "transcribe">, span: Span): Span[] {
  return (edit.transcribe ?? [])
    .map((p) => ({ start: Math.max(p.start, span.start), end: Math.min(p.end, span.end) }))
    .filter((p) => p.end > p.start)
    .sort((a, b) => a.start - b.start);
}

export interface HearRequest {
  edit: ClipEdit;
  span: Span;
  language: string | null;
  runner: FfmpegRunner;
  reporter: JobReporter;
  source: SourceInfo;
  chunkPath: (index: number) => string;
  jobId: string;
  signal: AbortSignal;
}

function merged(given: Transcript | null, heard: TranscriptWord[], language: string | null): Transcript | null {
  if (heard.length === 0) return given;
  const words = [...(given?.words ?? []), ...heard].sort((a, b) => a.start - b.start);
  return buildTranscript(given?.source ?? "workers_ai", given?.language ?? language, words);
}

export async function hearUncovered(req: HearRequest): Promise<HeardEdit> {
  const given = editTranscript(req.edit, req.language);
  const parts = uncoveredParts(req.edit, req.span);
  if (parts.length === 0) return { transcript: given, heard: 0, reason: null };
  if (!req.source.hasAudio) return { transcript: given, heard: 0, reason: "Part of the clip is outside the job's transcript, and the video has no audio." };
  let reason: string;
  try {
    const outcome = await transcribeWithWorkersAi({
      runner: req.runner,
      reporter: req.reporter,
      source: req.source,
      speech: parts,
      chunkPath: req.chunkPath,
      signal: req.signal,
      onProgress: () => undefined,
    });
    if (outcome.kind === "ok") {
      const inside = outcome.words.filter((w) => parts.some((p) => w.start >= p.start && w.start < p.end));
      log.info("edit_heard", { job_id: req.jobId, parts: parts.length, words: inside.length });
      return { transcript: merged(given, inside, outcome.language), heard: inside.length, reason: null };
    }
    reason = outcome.kind === "unavailable" ? "speech-to-text is not available on this deployment" : outcome.reason;
  } catch (error) {
    if (error instanceof JobAborted || req.signal.aborted) throw error;
    reason = errorMessage(error);
  }
  log.warn("edit_hearing_failed", { job_id: req.jobId, reason });
  const text = `Part of the clip is outside the job's transcript and has no captions: ${reason}.`;
  return { transcript: given, heard: 0, reason: text.length > 300 ? `${text.slice(0, 299)}…` : text };
}
