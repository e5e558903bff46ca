/**
 * CMX 3600 EDL (Premiere, Resolve, Avid): one video-and-audio cut event per
 * kept span of each clip, laid end to end from 01:00:00:00, non-drop-frame
 * timecode at the source's rounded rate.
 *
 * CMX 3600 is 7-bit text, one record a line: the title and comments are
 * made single-line printable ASCII (accents folded, other characters "?"),
 * comments cut to COMMENT_MAX characters. The reel is the source's file name
 * reduced to letters, digits and underscores, at most REEL_MAX (32, the
 * extended reel length Premiere and Resolve read) characters. Each event's
 * comments name the clip (FROM CLIP NAME), the source file, and the clip's
 * caption sidecars. An EDL carries no crop.
 */
import type { ExportTimeline, FrameRate } from "./timeline.ts";

export const REEL_MAX = 32;
export const COMMENT_MAX = 200;
const TITLE_MAX = 70;
/** The record side starts at one hour, the usual programme start. */
const RECORD_START_HOURS = 1;

/** One line of printable ASCII. */
export function edlText(text: string, max: number): string {
  const ascii = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[\r\n\t\u2028\u2029]+/g, " ")
    // Other control characters are not text: dropped.
    .replace(/[\x00-\x1F\x7F-\x9F]/g, "")
    // A surrogate pair (an emoji) is one character to the reader: one "?".
    .replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[^\x20-\x7E]/g, "?")
    .replace(/ {2,}/g, " ")
    .trim();
  return ascii.slice(0, max);
}

/** The reel name: A-Z, 0-9 and _ from the file name (without its extension), at most REEL_MAX; "AX" when nothing is left. */
export function reelName(fileName: string): string {
  const stem = fileName.replace(/\.[^.]*$/, "");
  const reel = edlText(stem, 1000)
    .toUpperCase()
    .replace(/[^A-Z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, REEL_MAX);
  return reel === "" ? "AX" : reel;
}

/** Timecode base: the rate's whole frames per second (29.97 counts 30, non-drop). */
export function timecodeBase(rate: FrameRate): number {
  return Math.max(1, Math.round(rate.num / rate.den));
}

export function timecode(frames: number, base: number): string {
  const two = (n: number) => String(n).padStart(2, "0");
  const ff = frames % base;
  const totalSeconds = Math.floor(frames / base);
  return `${two(Math.floor(totalSeconds / 3600))}:${two(Math.floor(totalSeconds / 60) % 60)}:${two(totalSeconds % 60)}:${two(ff)}`;
}

export function writeEdl(timeline: ExportTimeline): string {
  const base = timecodeBase(timeline.rate);
  const reel = reelName(timeline.source.fileName);
  const lines = [`TITLE: ${edlText(timeline.title, TITLE_MAX) || "clipjobs"}`, "FCM: NON-DROP FRAME", ""];
  let record = RECORD_START_HOURS * 3600 * base;
  let event = 0;
  for (const clip of timeline.clips) {
    clip.spans.forEach((span, part) => {
      event += 1;
      const length = span.sourceOut - span.sourceIn;
      const number = String(event).padStart(3, "0");
      lines.push(`${number}  ${reel.padEnd(8)} AA/V  C        ${timecode(span.sourceIn, base)} ${timecode(span.sourceOut, base)} ${timecode(record, base)} ${timecode(record + length, base)}`);
      const name = clip.spans.length > 1 ? `${clip.name} (part ${part + 1} of ${clip.spans.length})` : clip.name;
      lines.push(`* FROM CLIP NAME: ${edlText(name, COMMENT_MAX)}`);
      lines.push(`* SOURCE FILE: ${edlText(timeline.source.fileName, COMMENT_MAX)}`);
      if (clip.captions) {
        lines.push(`* CAPTIONS VTT: ${edlText(clip.captions.vtt, COMMENT_MAX)}`);
        lines.push(`* CAPTIONS SRT: ${edlText(clip.captions.srt, COMMENT_MAX)}`);
      }
      lines.push("");
      record += length;
    });
  }
  return `${lines.join("\r\n")}\r\n`;
}
