/**
 * A job's transcript from the best source that yields one, in the order the
 * product promises: Workers AI speech-to-text, the source's subtitle track,
 * the platform's subtitles, the client's captions_url. The source used is
 * recorded; with none, the job carries `transcript: null` and a reason the
 * user can read (e.g. local development has no speech-to-text).
 */
import type { Transcript } from "#contract";
import type { SpeechPcm } from "../analyse/measure.ts";
import { JobAborted, errorMessage } from "../shared/errors.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { log } from "../shared/log.ts";
import type { JobReporter } from "../channel/report.ts";
import type { SourceInfo } from "../shared/types.ts";
import { buildTranscript, wordsFromCues } from "./build.ts";
import type { Span } from "./chunk-plan.ts";
import type { Cue } from "./cues.ts";
import { platformSubtitles } from "./platform.ts";
import { subtitleTrackCues } from "./track.ts";
import { transcribeWithWorkersAi } from "./workers-ai.ts";

export interface TranscriptRequest {
  runner: FfmpegRunner;
  reporter: JobReporter;
  source: SourceInfo;
  /** Where the analysis heard speech; null when unknown (the whole audio is sent). */
  speech: Span[] | null;
  workDir: string;
  file: (name: string) => string;
  /** yt-dlp, when the source came from a platform through it. */
  platformYtdlp: string | null;
  /** The client's captions_url, already fetched and parsed (it fails the job when unusable). */
  captionsUrlCues: Cue[] | null;
  /** The analysis's speech PCM, for speech-to-text chunks to be cut from (pcm-chunk.ts); absent: extracted by ffmpeg. */
  pcm?: SpeechPcm | null;
  jobId: string;
  signal: AbortSignal;
  onProgress: (fraction: number) => void;
}

export interface TranscriptOutcome {
  transcript: Transcript | null;
  /** Why there is none (null when there is one). */
  reason: string | null;
}

const MAX_REASON = 300;

function fromCues(source: Transcript["source"], cues: Cue[], language: string | null, duration: number): Transcript | null {
  const transcript = buildTranscript(source, language, wordsFromCues(cues, duration));
  return transcript.words.length > 0 ? transcript : null;
}

export async function obtainTranscript(req: TranscriptRequest): Promise<TranscriptOutcome> {
  const duration = req.source.durationSeconds;
  const misses: string[] = [];
  const guarded = async <T>(what: string, run: () => Promise<T>): Promise<T | null> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof JobAborted || req.signal.aborted) throw error;
      log.warn("transcript_source_error", { job_id: req.jobId, source: what, error: errorMessage(error) });
      misses.push(`${what} failed`);
      return null;
    }
  };

  if (req.source.hasAudio) {
    const ai = await guarded("speech-to-text", () =>
      transcribeWithWorkersAi({
        runner: req.runner,
        reporter: req.reporter,
        source: req.source,
        speech: req.speech,
        pcm: req.pcm ?? null,
        chunkPath: (i) => req.file(`speech-${i}.wav`),
        signal: req.signal,
        onProgress: (f) => req.onProgress(f * 0.9),
      }),
    );
    if (ai?.kind === "ok" && ai.words.length > 0) {
      log.info("transcript_source", { job_id: req.jobId, source: "workers_ai", words: ai.words.length, chunks: ai.chunks });
      return { transcript: buildTranscript("workers_ai", ai.language, ai.words), reason: null };
    }
    if (ai?.kind === "ok") misses.push("speech-to-text heard no words");
    else if (ai?.kind === "unavailable") misses.push("speech-to-text is not available on this deployment");
    else if (ai?.kind === "failed") misses.push(ai.reason);
  } else {
    misses.push("the video has no audio");
  }

  const track = await guarded("the subtitle track", () => subtitleTrackCues(req.runner, req.source, req.file("track.srt"), req.signal));
  if (track?.found) {
    const transcript = fromCues("subtitle_track", track.found.cues, track.found.language, duration);
    if (transcript) return { transcript, reason: null };
    misses.push("the subtitle track has no words within the video");
  } else if (track) {
    misses.push(track.note);
  }

  if (req.platformYtdlp) {
    const platform = await guarded("platform subtitles", () => platformSubtitles(req.platformYtdlp!, req.workDir, req.signal));
    if (platform?.found) {
      const transcript = fromCues("platform_subtitles", platform.found.cues, platform.found.language.slice(0, 2), duration);
      if (transcript) return { transcript, reason: null };
      misses.push("the platform's subtitles have no words within the video");
    } else if (platform) {
      misses.push(platform.note);
    }
  }

  if (req.captionsUrlCues) {
    const transcript = fromCues("captions_url", req.captionsUrlCues, null, duration);
    if (transcript) return { transcript, reason: null };
    misses.push("the captions_url file has no cues within the video");
  } else {
    misses.push("no captions_url was given");
  }
  req.onProgress(1);
  const reason = `No transcript: ${misses.join("; ")}.`;
  return { transcript: null, reason: reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason };
}
