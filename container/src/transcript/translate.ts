/**
 * Captions in the viewer's language: the spoken sentences inside
 * the job's clips, and the clips' titles, translated through the Worker's
 * /translate route (Workers AI, @cf/meta/m2m100-1.2b). Each sentence keeps
 * the time it was spoken, so cuts (already made on the spoken sentences)
 * and cue times do not move.
 *
 * Translation is all or nothing: when the deployment cannot translate
 * (local development: 503) or the model keeps failing (502), the job goes on
 * with captions in the spoken language and says why.
 */
import {
  CAPTION_LANGUAGES,
  LANGUAGE_NAMES,
  normalizeLanguage,
  TRANSLATE_MAX_TEXT_CHARS,
  TRANSLATE_MAX_TEXTS,
  type CaptionLanguage,
  type LanguageCode,
  type Transcript,
  type TranslationOutcome,
} from "#contract";
import type { CaptionTranslation } from "../captions/index.ts";
import { joinPieces, splitUnspaced } from "../captions/script.ts";
import { JobAborted } from "../shared/errors.ts";
import { log } from "../shared/log.ts";
import type { JobReporter } from "../channel/report.ts";

export interface TranslateCaptionsRequest {
  reporter: Pick<JobReporter, "translate">;
  transcript: Transcript | null;
  /** The clips as cut (source seconds): only their sentences are translated. */
  clips: readonly { start: number; end: number }[];
  /** The clips' titles as chosen from their own words. */
  titles: readonly string[];
  target: CaptionLanguage;
  /** The job's `language` hint, which wins over the detected language. */
  hint: string | null;
  jobId: string;
}

export interface TranslateCaptionsResult {
  outcome: TranslationOutcome;
  /** The translated captions, when outcome.status is "translated". */
  translation: CaptionTranslation | null;
  /** A few words for the job's step when the captions stay in the spoken language. */
  note: string | null;
}

function nameOf(code: string | null): string {
  return code && code in LANGUAGE_NAMES ? LANGUAGE_NAMES[code as LanguageCode] : "the spoken language";
}

/** Splits a sentence longer than the route takes at word (or CJK character) boundaries. */
export function splitForTranslation(text: string, maxChars = TRANSLATE_MAX_TEXT_CHARS): string[] {
  if (text.length <= maxChars) return [text];
  const pieces = text.split(/\s+/).flatMap((word) => splitUnspaced(word)).flatMap((p) => (p.length <= maxChars ? [p] : p.match(new RegExp(`[\\s\\S]{1,${maxChars}}`, "gu")) ?? []));
  const parts: string[] = [];
  let current: string[] = [];
  for (const piece of pieces) {
    if (current.length > 0 && joinPieces([...current, piece]).length > maxChars) {
      parts.push(joinPieces(current));
      current = [];
    }
    current.push(piece);
  }
  if (current.length > 0) parts.push(joinPieces(current));
  return parts;
}

/** Chinese and Japanese join translated pieces without spaces. */
function joinTranslated(parts: string[], target: string): string {
  return target === "zh" || target === "ja" ? parts.join("") : parts.join(" ");
}

export async function translateCaptions(req: TranslateCaptionsRequest): Promise<TranslateCaptionsResult> {
  const target = req.target;
  const spoken = normalizeLanguage(req.hint) ?? normalizeLanguage(req.transcript?.language);
  const result = (status: TranslationOutcome["status"], detail: string | null, note: string | null): TranslateCaptionsResult => ({
    outcome: { language: target, status, detail: detail?.slice(0, 300) ?? null },
    translation: null,
    note,
  });
  if (!req.transcript || req.transcript.sentences.length === 0) {
    return result("skipped", "The video has no transcript, so there were no captions to translate.", null);
  }
  if (spoken === target) return result("not_needed", null, null);
  if (spoken === null) {
    return result("skipped", "The spoken language is not known: send `language` with the job to have its captions translated.", `captions as spoken: the spoken language is unknown`);
  }
  if (!(CAPTION_LANGUAGES as readonly string[]).includes(spoken)) {
    return result("skipped", `Captions cannot be translated from ${nameOf(spoken)}.`, `captions stay in ${nameOf(spoken)}`);
  }
  const inClip = (s: { start: number; end: number }) => req.clips.some((c) => (s.start + s.end) / 2 >= c.start && (s.start + s.end) / 2 < c.end);
  const sentences = req.transcript.sentences.filter(inClip);
  const titles = [...new Set(req.titles.filter((t) => t.trim() !== ""))];
  // Every text to send, and which sentence or title each belongs to.
  const sourceTexts: string[] = [];
  const sentenceParts = sentences.map((s) => splitForTranslation(s.text.trim()).map((part) => sourceTexts.push(part) - 1));
  const titleParts = titles.map((t) => splitForTranslation(t).map((part) => sourceTexts.push(part) - 1));
  const translated: string[] = [];
  for (let at = 0; at < sourceTexts.length; at += TRANSLATE_MAX_TEXTS) {
    const texts = sourceTexts.slice(at, at + TRANSLATE_MAX_TEXTS);
    let answer;
    try {
      answer = await req.reporter.translate({ source_language: spoken as CaptionLanguage, target_language: target, texts });
    } catch (error) {
      if (error instanceof JobAborted) throw error;
      log.warn("translation_call_failed", { job_id: req.jobId, error: error instanceof Error ? error.message : String(error) });
      return result("failed", "The translation service could not be reached; captions are in the spoken language.", `captions stay in ${nameOf(spoken)}: translation failed`);
    }
    if (answer.kind === "unavailable") {
      return result("unavailable", "Translation is not available on this deployment (no Workers AI binding); captions are in the spoken language.", `captions stay in ${nameOf(spoken)}: no translation here`);
    }
    if (answer.kind === "failed") {
      log.warn("translation_failed", { job_id: req.jobId, detail: answer.detail });
      return result("failed", "The translation model kept failing; captions are in the spoken language.", `captions stay in ${nameOf(spoken)}: translation failed`);
    }
    if (answer.texts.some((t) => t.trim() === "")) {
      return result("failed", "The translation model answered an empty text; captions are in the spoken language.", `captions stay in ${nameOf(spoken)}: translation failed`);
    }
    translated.push(...answer.texts.map((t) => t.trim()));
  }
  const translation: CaptionTranslation = {
    language: target,
    sentences: sentences.map((s, i) => ({ text: joinTranslated(sentenceParts[i]!.map((k) => translated[k]!), target), start: s.start, end: s.end })),
    titles: new Map(titles.map((t, i) => [t, joinTranslated(titleParts[i]!.map((k) => translated[k]!), target)])),
  };
  return { outcome: { language: target, status: "translated", detail: null }, translation, note: null };
}
