/**
 * Everything one clip needs from the transcript: its text and title, the ASS
 * file to burn (captions when burning is asked for, and the hook title, when
 * the backend has libass) and the WebVTT/SubRip sidecars (when asked for).
 * Files go in the job's work dir.
 *
 * With a translation the text, title and captions are the
 * translated ones, paged per spoken sentence (layout.ts sentencePages), so
 * cues keep the spoken sentences' times; without one they follow the words
 * as heard.
 */
import { writeFile } from "node:fs/promises";
import type { ClipConfig, Transcript, TranscriptWord } from "#contract";
import { isFiller, keptSeconds, toClipTime, type RemovalPlan } from "../steer/removals.ts";
import { clipText, clipTitle, MAX_TITLE_CHARS } from "../transcript/title.ts";
import { buildAss, type CaptionBrand, type HookTitle } from "./ass.ts";
import { markEmphasis } from "./emphasis.ts";
import { captionMetrics, clipWords, layoutPages, sentencePages, type CaptionPage, type TimedText } from "./layout.ts";
import { joinPieces } from "./script.ts";
import { buildSrt, buildVtt } from "./sidecar.ts";

export interface ClipCaptions {
  text: string | null;
  title: string | null;
  /** ASS file to burn in, or null. */
  assPath: string | null;
  vttPath: string | null;
  srtPath: string | null;
  /** Captions are drawn into the picture (the ASS file may also hold only a hook title). */
  captionsBurned: boolean;
  /** A hook title is drawn (in the ASS file). */
  hookTitle: boolean;
}

/** The job's captions in the caption language: the spoken sentences translated, in source time. */
export interface CaptionTranslation {
  language: string;
  sentences: TimedText[];
  /** Original clip title -> its translation. */
  titles: ReadonlyMap<string, string>;
}

export interface ClipCaptionsRequest {
  transcript: Transcript | null;
  config: ClipConfig;
  start: number;
  end: number;
  width: number;
  height: number;
  /** False on a backend without libass (the WebAssembly ffmpeg). */
  canBurn: boolean;
  file: (name: string) => string;
  index: number;
  translation?: CaptionTranslation | null;
  /** The video's title: the hook title of a clip without words of its own. */
  videoTitle?: string | null;
  /** Pixels from the top where the hook title may start (below a logo at the top). */
  hookTop?: number;
  /**
   * What the render cuts out (steering's silence and filler removal). Filler words (when cut) leave the
   * text, title and captions; caption times follow the cut clip.
   */
  removal?: { plan: RemovalPlan; fillers: boolean };
  /** A model-judged clip (docs/judgement.md): its key words to emphasise (empty: none) and its post title, for the hook title. */
  emphasis?: readonly string[];
  postTitle?: string | null;
}

const MAX_TEXT_CHARS = 10_000;

function brandOf(config: ClipConfig): CaptionBrand {
  return {
    font: config.caption_font,
    text: config.caption_color,
    highlight: config.caption_highlight_color,
    outline: config.caption_outline_color,
    box: config.caption_box_color,
  };
}

/** Sentences whose middle is inside the clip. */
function clipSentences(sentences: readonly TimedText[], start: number, end: number): TimedText[] {
  return sentences.filter((s) => (s.start + s.end) / 2 >= start && (s.start + s.end) / 2 < end);
}

function translatedText(sentences: readonly TimedText[]): string | null {
  const text = joinPieces(sentences.map((s) => s.text.trim()).filter((t) => t !== ""));
  if (text === "") return null;
  return text.length > MAX_TEXT_CHARS ? `${text.slice(0, MAX_TEXT_CHARS - 1)}…` : text;
}

/** The clip's words in seconds of the rendered (cut) clip, for caption pages. */
function cutClipWords(words: TranscriptWord[], start: number, end: number, plan: RemovalPlan): TranscriptWord[] {
  return words
    .filter((w) => (w.start + w.end) / 2 >= start && (w.start + w.end) / 2 < end)
    .map((w) => ({ ...w, start: toClipTime(plan, w.start), end: toClipTime(plan, w.end) }));
}

export async function prepareClipCaptions(req: ClipCaptionsRequest): Promise<ClipCaptions> {
  const result: ClipCaptions = { text: null, title: null, assPath: null, vttPath: null, srtPath: null, captionsBurned: false, hookTitle: false };
  const { config } = req;
  const metrics = captionMetrics(config.caption_style, req.width, req.height, config.caption_size);
  const plan = req.removal?.plan;
  const cut = plan !== undefined && plan.kept.length > 1;
  const renderedSeconds = cut ? keptSeconds(plan) : req.end - req.start;
  let pages: CaptionPage[] = [];
  let language: string | null = req.transcript?.language ?? config.language ?? null;
  if (req.transcript) {
    const words = req.removal?.fillers ? req.transcript.words.filter((w) => !isFiller(w.text)) : req.transcript.words;
    const heardText = clipText(words, req.start, req.end);
    const heardTitle = heardText ? clipTitle(req.transcript.sentences, words, req.start, req.end) : null;
    if (req.translation) {
      const own = clipSentences(req.translation.sentences, req.start, req.end);
      result.text = translatedText(own);
      // The title as translated; else the clip's first translated sentence.
      const title = (heardTitle ? req.translation.titles.get(heardTitle) : undefined) ?? own[0]?.text ?? null;
      result.title = title ? title.slice(0, MAX_TITLE_CHARS) : null;
      language = req.translation.language;
      if (config.captions !== "off") {
        // Sentences keep their spoken times, in the rendered clip's time when pauses were cut.
        const timed = cut ? own.map((t) => ({ ...t, start: toClipTime(plan, t.start), end: toClipTime(plan, t.end) })) : own;
        pages = sentencePages(timed, metrics, cut ? 0 : req.start, cut ? renderedSeconds : req.end);
      }
    } else {
      result.text = heardText;
      result.title = heardTitle;
      if (config.captions !== "off" && heardText) {
        const pageWords = cut
          ? clipWords(cutClipWords(words, req.start, req.end, plan), 0, renderedSeconds, metrics.lineChars)
          : clipWords(words, req.start, req.end, metrics.lineChars);
        pages = layoutPages(pageWords, metrics, renderedSeconds);
      }
    }
  }
  if (req.emphasis && req.emphasis.length > 0) pages = markEmphasis(pages, req.emphasis);
  const burn = (config.captions === "burned" || config.captions === "both") && req.canBurn && pages.length > 0;
  // The clip's own title, else the video's (without a file name's extension).
  const videoTitle = req.videoTitle?.replace(/\.(?:mp4|m4v|mov|mkv|webm|avi|ts|flv)$/i, "").trim() || null;
  const hookText = config.hook_title_seconds > 0 && req.canBurn ? (req.postTitle ?? result.title ?? videoTitle) : null;
  const hookTitle: HookTitle | null = hookText
    ? { text: hookText, seconds: Math.min(config.hook_title_seconds, renderedSeconds), top: Math.max(Math.round(req.height * 0.08), req.hookTop ?? 0) }
    : null;
  if (burn || hookTitle) {
    result.assPath = req.file(`clip-${req.index}.ass`);
    result.hookTitle = hookTitle !== null;
    result.captionsBurned = burn;
    const ass = buildAss({
      pages: burn ? pages : [],
      metrics,
      style: config.caption_style,
      position: config.caption_position,
      width: req.width,
      height: req.height,
      brand: brandOf(config),
      language,
      // Translated pages have no word times: nothing to highlight word by word.
      highlightWords: !req.translation,
      hookTitle,
    });
    await writeFile(result.assPath, ass, "utf8");
  }
  if ((config.captions === "sidecar" || config.captions === "both") && pages.length > 0) {
    result.vttPath = req.file(`clip-${req.index}.vtt`);
    result.srtPath = req.file(`clip-${req.index}.srt`);
    await writeFile(result.vttPath, buildVtt(pages), "utf8");
    await writeFile(result.srtPath, buildSrt(pages), "utf8");
  }
  return result;
}
