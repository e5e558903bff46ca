/**
 * WebVTT and SubRip files for one clip, from the same pages burned captions
 * use, timed from the clip's start. Cue text is escaped for each format so a
 * transcript can never add markup a player would interpret.
 */
import { pageText, type CaptionPage, type PageWord } from "./layout.ts";
import { joinsWithoutSpace } from "./script.ts";

function stamp(seconds: number, separator: "." | ","): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const rest = ms % 1000;
  return `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}${separator}${String(rest).padStart(3, "0")}`;
}

function vttText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** SubRip has no escapes; players read <i>-style tags and {\..} blocks, so those characters are replaced. */
function srtText(text: string): string {
  return text.replace(/</g, "‹").replace(/>/g, "›").replace(/\{/g, "(").replace(/\}/g, ")");
}

/** A line in WebVTT: escaped words, the clip's key words (emphasis.ts) in <b>. */
function vttLine(line: readonly PageWord[]): string {
  return line.reduce((out, w, i) => {
    const gap = i === 0 || joinsWithoutSpace(line[i - 1]!.text, w.text) ? "" : " ";
    return `${out}${gap}${w.emphasis === true ? `<b>${vttText(w.text)}</b>` : vttText(w.text)}`;
  }, "");
}

export function buildVtt(pages: CaptionPage[]): string {
  const cues = pages.map((page, i) => `${i + 1}\n${stamp(page.start, ".")} --> ${stamp(page.end, ".")}\n${page.lines.some((line) => line.some((w) => w.emphasis === true)) ? page.lines.map(vttLine).join("\n") : vttText(pageText(page, "\n"))}`);
  return `WEBVTT\n\n${cues.join("\n\n")}\n`;
}

export function buildSrt(pages: CaptionPage[]): string {
  const cues = pages.map((page, i) => `${i + 1}\n${stamp(page.start, ",")} --> ${stamp(page.end, ",")}\n${srtText(pageText(page, "\n"))}`);
  return `${cues.join("\n\n")}\n`;
}
