/**
 * Everything one clip needs from the transcript: its text and title, the ASS
 * file to burn (when burning is asked for and the backend has libass) and the
 * WebVTT/SubRip sidecars (when asked for). Files go in the job's work dir.
 */
import { writeFile } from "node:fs/promises";
import type { ClipConfig, Transcript, TranscriptWord } from "#contract";
import { isFiller, keptSeconds, toClipTime, type RemovalPlan } from "../steer/removals.ts";
import { clipText, clipTitle } from "../transcript/title.ts";
import { buildAss } from "./ass.ts";
import { captionMetrics, clipWords, layoutPages } from "./layout.ts";
import { buildSrt, buildVtt } from "./sidecar.ts";

export interface ClipCaptions {
  text: string | null;
  title: string | null;
  /** ASS file to burn in, or null. */
  assPath: string | null;
  vttPath: string | null;
  srtPath: string | null;
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
  /**
   * Issue 27: what the render cuts out. Filler words (when cut) leave the
   * text, title and captions; caption times follow the cut clip.
   */
  removal?: { plan: RemovalPlan; fillers: boolean };
}

/** The clip's words in seconds of the rendered (cut) clip, for caption pages. */
function cutClipWords(words: TranscriptWord[], start: number, end: number, plan: RemovalPlan): TranscriptWord[] {
  return words
    .filter((w) => (w.start + w.end) / 2 >= start && (w.start + w.end) / 2 < end)
    .map((w) => ({ ...w, start: toClipTime(plan, w.start), end: toClipTime(plan, w.end) }));
}

export async function prepareClipCaptions(req: ClipCaptionsRequest): Promise<ClipCaptions> {
  const none: ClipCaptions = { text: null, title: null, assPath: null, vttPath: null, srtPath: null };
  if (!req.transcript) return none;
  const words = req.removal?.fillers ? req.transcript.words.filter((w) => !isFiller(w.text)) : req.transcript.words;
  const text = clipText(words, req.start, req.end);
  if (!text) return none;
  const title = clipTitle(req.transcript.sentences, words, req.start, req.end);
  const result: ClipCaptions = { ...none, text, title };
  const mode = req.config.captions;
  if (mode === "off") return result;
  const metrics = captionMetrics(req.config.caption_style, req.width, req.height);
  const plan = req.removal?.plan;
  const cut = plan !== undefined && plan.kept.length > 1;
  const pageWords = cut
    ? clipWords(cutClipWords(words, req.start, req.end, plan), 0, keptSeconds(plan), metrics.lineChars)
    : clipWords(words, req.start, req.end, metrics.lineChars);
  const pages = layoutPages(pageWords, metrics, cut ? keptSeconds(plan) : req.end - req.start);
  if (pages.length === 0) return result;
  if ((mode === "burned" || mode === "both") && req.canBurn) {
    result.assPath = req.file(`clip-${req.index}.ass`);
    const ass = buildAss({ pages, metrics, style: req.config.caption_style, position: req.config.caption_position, width: req.width, height: req.height });
    await writeFile(result.assPath, ass, "utf8");
  }
  if (mode === "sidecar" || mode === "both") {
    result.vttPath = req.file(`clip-${req.index}.vtt`);
    result.srtPath = req.file(`clip-${req.index}.srt`);
    await writeFile(result.vttPath, buildVtt(pages), "utf8");
    await writeFile(result.srtPath, buildSrt(pages), "utf8");
  }
  return result;
}
