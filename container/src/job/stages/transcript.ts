/**
 * The words spoken: from the captions_url, the platform, a subtitle track or
 * speech-to-text (transcript/index.ts). Within a time_range only the range
 * is transcribed and kept.
 */
import { rm } from "node:fs/promises";
import type { Transcript } from "#contract";
import type { SpeechPcm } from "../../analyse/measure.ts";
import type { SourceWindow } from "../../steer/time-range.ts";
import { obtainTranscript } from "../../transcript/index.ts";
import { need, type JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";
import { isPlatformUrl } from "./download.ts";

/** The transcript's words and sentences inside the analysed window (a time_range); null when none are. */
function transcriptInWindow(transcript: Transcript | null, window: SourceWindow, whole: boolean): Transcript | null {
  if (!transcript || whole) return transcript;
  const inside = (item: { start: number; end: number }) => (item.start + item.end) / 2 >= window.start && (item.start + item.end) / 2 < window.end;
  const words = transcript.words.filter(inside);
  return words.length > 0 ? { ...transcript, words, sentences: transcript.sentences.filter(inside) } : null;
}

/** Removes the analysis's PCM once the transcript has cut its chunks (a job's whole work directory goes at its end anyway). */
async function removePcm(pcm: SpeechPcm | null): Promise<void> {
  if (pcm) await rm(pcm.path, { force: true });
}

export const transcript: JobStage<JobContext> = {
  name: "transcript",
  progress: () => ({ stage: "transcribe", step: "Transcribing speech" }),
  timing: () => "transcript",
  async run(ctx) {
    const { job, workDir } = ctx;
    const source = need(ctx.source, "the probed source");
    const { window, wholeSource, speechSpans, speechPcm } = need(ctx.analysis, "the analysis");
    const heard = await obtainTranscript({
      runner: ctx.runner,
      reporter: ctx.reporter,
      source,
      // Within a time_range, only the range is transcribed.
      speech: speechSpans ?? (wholeSource ? null : [{ start: window.start, end: window.end }]),
      workDir: workDir.path,
      file: (name) => workDir.file(name),
      platformYtdlp: isPlatformUrl(job.video_url) ? ctx.config.ytdlpPath : null,
      captionsUrlCues: ctx.captionsUrlCues,
      pcm: speechPcm,
      jobId: ctx.jobId,
      signal: ctx.signal,
      onProgress: (f) => ctx.progress.update(f),
    });
    // The PCM served the transcript's chunks; the renders get its disk (32 kB a second of source).
    await removePcm(speechPcm);
    let transcript = transcriptInWindow(heard.transcript, window, wholeSource);
    // A source that does not say its language (a captions file) is in the one the job was told.
    if (transcript && transcript.language === null && job.config.language) transcript = { ...transcript, language: job.config.language };
    ctx.transcript = transcript;
    ctx.transcriptReason = heard.transcript && !transcript ? "No words were spoken inside time_range." : heard.reason;
  },
};
