/**
 * Once per job, before its clips render: the captions' language
 * (translation through the Worker, transcript/translate.ts) and the account's
 * logo (brand/logo.ts). What cannot be had never fails the job: the clips
 * are made without it and `note` says so in the job's step.
 */
import { LANGUAGE_NAMES, type LanguageCode, type StartJob, type Transcript, type TranslationOutcome } from "#contract";
import type { CaptionTranslation } from "../captions/index.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { log } from "../shared/log.ts";
import type { ProgressTracker } from "../channel/progress.ts";
import type { JobReporter } from "../channel/report.ts";
import { isFiller } from "../steer/removals.ts";
import { clipText, clipTitle } from "../transcript/title.ts";
import { translateCaptions } from "../transcript/translate.ts";
import { logoMargin, placeLogo, prepareLogo, type LogoPlacement } from "./logo.ts";

export interface JobBrand {
  /** The captions in the caption language, or null (as spoken). */
  translation: CaptionTranslation | null;
  /** For the completion report: null when no caption_language was asked for. */
  translationOutcome: TranslationOutcome | null;
  logo: { path: string; demuxer: string; placement: LogoPlacement } | null;
  /** Pixels from the top below which the hook title starts (under a logo at the top). */
  hookTop: number;
  /** What the job goes without, for its step (" (...)"), or "". */
  note: string;
}

export interface PrepareBrandRequest {
  job: Pick<StartJob, "job_id" | "config">;
  runner: FfmpegRunner;
  reporter: Pick<JobReporter, "translate" | "getLogo">;
  progress: Pick<ProgressTracker, "enter">;
  transcript: Transcript | null;
  clips: readonly { start: number; end: number }[];
  output: { width: number; height: number };
  logoPath: string;
  signal: AbortSignal;
}

export async function prepareBrand(req: PrepareBrandRequest): Promise<JobBrand> {
  const { config } = req.job;
  const notes: string[] = [];
  const brand: JobBrand = { translation: null, translationOutcome: null, logo: null, hookTop: 0, note: "" };
  const target = config.caption_language;
  if (target) {
    req.progress.enter("transcribe", `Translating captions into ${LANGUAGE_NAMES[target as LanguageCode]}`);
    const transcript = req.transcript;
    // The titles the clips will show: chosen from their words as heard, or without fillers when those are cut.
    const wordSets = transcript ? [transcript.words, ...(config.remove_fillers ? [transcript.words.filter((w) => !isFiller(w.text))] : [])] : [];
    const titles = transcript
      ? req.clips.flatMap((c) => wordSets.map((words) => (clipText(words, c.start, c.end) ? clipTitle(transcript.sentences, words, c.start, c.end) : null))).filter((t): t is string => t !== null)
      : [];
    const translated = await translateCaptions({
      reporter: req.reporter,
      transcript,
      clips: req.clips,
      titles,
      target,
      hint: config.language,
      jobId: req.job.job_id,
    });
    brand.translation = translated.translation;
    brand.translationOutcome = translated.outcome;
    if (translated.note) notes.push(translated.note);
    log.info("job_translation", { job_id: req.job.job_id, status: translated.outcome.status, language: target });
  }
  if (config.logo_position !== "off") {
    if (req.runner.backend !== "native") {
      notes.push("no logo: this engine's ffmpeg cannot draw it");
    } else {
      const outcome = await prepareLogo({ reporter: req.reporter, runner: req.runner, path: req.logoPath, signal: req.signal });
      if (outcome.kind === "ready") {
        const placement = placeLogo(config, req.output, outcome.logo);
        if (placement) {
          brand.logo = { path: outcome.logo.path, demuxer: outcome.logo.demuxer, placement };
          if (config.logo_position.startsWith("top")) brand.hookTop = placement.y + placement.height + Math.round(logoMargin(req.output) / 2);
        }
      } else {
        notes.push(`no logo: ${outcome.reason}`);
        log.warn("job_logo_unavailable", { job_id: req.job.job_id, reason: outcome.reason });
      }
    }
  }
  if (config.hook_title_seconds > 0 && req.runner.backend !== "native") notes.push("no hook title on this engine's ffmpeg");
  brand.note = notes.length > 0 ? ` (${notes.join("; ")})` : "";
  return brand;
}
