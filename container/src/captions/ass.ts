/**
 * The ASS subtitle document libass draws into a clip. Three presets:
 * - bold: large bold text with a thick outline; the word being said is drawn
 *   in the highlight colour (one event per word, each showing the page with
 *   that word highlighted);
 * - clean: regular text with a soft drop shadow;
 * - boxed: text on a translucent box (BorderStyle 3).
 * Position bottom sits above the lower 12% of the picture (clear of the
 * platforms' own overlays); center is the middle. Font, size and colours
 * come from the configuration; a font without the text's script
 * is swapped for the matching Noto font (script.ts).
 *
 * The hook title is a second style, drawn at the top over the
 * clip's first seconds in the caption font and colours.
 *
 * Right-to-left text: every style has Encoding -1, libass's own extension
 * that lays out each event as one bidi paragraph with its base direction
 * detected from the text. Without it libass imitates VSFilter, which
 * reorders text only within each run between override tags and then places
 * the runs left to right: the highlight tags around the spoken word split an
 * Arabic line into three runs, shown in the wrong order (the word after the
 * highlight on the left, the one before it on the right).
 *
 * Transcript text is data, never markup: escapeAssText leaves no `{`, `}` or
 * backslash, so no override tag (\pos, \N, \h, drawing mode...) can come
 * from a transcript; the only tags in the file are the engine's own.
 */
import type { CaptionFont, CaptionPosition, CaptionStyle } from "#contract";
import { breakLines, lineText, type CaptionMetrics, type CaptionPage } from "./layout.ts";
import { fontForText, joinsWithoutSpace } from "./script.ts";

/** The default caption font (the configuration's caption_font default). */
export const CAPTION_FONT = "DejaVu Sans";
/** libass: lay out each event as one bidi paragraph, base direction from its text (see above). */
const WHOLE_EVENT_BIDI = -1;

/** #RRGGBB -> the ASS style colour &HAABBGGRR (AA: 00 opaque, FF transparent). */
export function assColour(hex: string, alpha = 0): string {
  const rgb = hex.replace(/^#/, "").toUpperCase();
  const aa = alpha.toString(16).toUpperCase().padStart(2, "0");
  return `&H${aa}${rgb.slice(4, 6)}${rgb.slice(2, 4)}${rgb.slice(0, 2)}`;
}

/** #RRGGBB -> the colour override tag's &HBBGGRR& (no alpha). */
function colourTag(hex: string): string {
  const rgb = hex.replace(/^#/, "").toUpperCase();
  return `&H${rgb.slice(4, 6)}${rgb.slice(2, 4)}${rgb.slice(0, 2)}&`;
}

export function escapeAssText(text: string): string {
  return text
    .replace(/[\r\n\t]+/g, " ")
    .replace(/\\/g, "\u2216")
    .replace(/\{/g, "(")
    .replace(/\}/g, ")");
}

function assTime(seconds: number): string {
  const cs = Math.max(0, Math.round(seconds * 100));
  const h = Math.floor(cs / 360000);
  const m = Math.floor((cs % 360000) / 6000);
  const s = Math.floor((cs % 6000) / 100);
  const c = cs % 100;
  return `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}.${String(c).padStart(2, "0")}`;
}

/** The configuration's brand members the drawing uses (#RRGGBB colours). */
export interface CaptionBrand {
  font: CaptionFont;
  text: string;
  highlight: string;
  outline: string;
  box: string;
}

export const DEFAULT_BRAND: CaptionBrand = { font: "DejaVu Sans", text: "#FFFFFF", highlight: "#FFE500", outline: "#000000", box: "#000000" };

interface StyleFields {
  bold: boolean;
  outlineColour: string;
  backColour: string;
  borderStyle: 1 | 3;
  outline: number;
  shadow: number;
}

function styleFields(style: CaptionStyle, fontSize: number, brand: CaptionBrand): StyleFields {
  switch (style) {
    case "bold":
      return { bold: true, outlineColour: assColour(brand.outline), backColour: assColour(brand.outline, 0x80), borderStyle: 1, outline: Math.max(2, Math.round(fontSize * 0.09)), shadow: 0 };
    case "clean":
      return { bold: false, outlineColour: assColour(brand.outline, 0x40), backColour: assColour(brand.outline, 0x60), borderStyle: 1, outline: Math.max(1, Math.round(fontSize * 0.02)), shadow: Math.max(1, Math.round(fontSize * 0.06)) };
    case "boxed":
      // With BorderStyle 3 libass fills the box with OutlineColour; Outline is the box's padding.
      return { bold: false, outlineColour: assColour(brand.box, 0x50), backColour: assColour(brand.box, 0x50), borderStyle: 3, outline: Math.max(2, Math.round(fontSize * 0.22)), shadow: 0 };
  }
}

/** The clip's title over its first seconds. */
export interface HookTitle {
  text: string;
  /** Shown from the clip's start for this long. */
  seconds: number;
  /** Pixels from the top of the picture to the title's first line (below a logo placed at the top). */
  top: number;
}

export interface AssRequest {
  pages: CaptionPage[];
  metrics: CaptionMetrics;
  style: CaptionStyle;
  position: CaptionPosition;
  width: number;
  height: number;
  brand?: CaptionBrand;
  /** The captions' language when known (Chinese, Japanese and Korean use different CJK fonts). */
  language?: string | null;
  /** Draw the spoken word in the highlight colour (style bold with word times); default true. */
  highlightWords?: boolean;
  hookTitle?: HookTitle | null;
}

/** Font size of the hook title: a little larger than bold captions at the configured size. */
export function hookFontSize(metrics: CaptionMetrics, width: number, height: number): number {
  return Math.round(Math.max(metrics.fontSize, Math.min(width, height) * 0.065) * 1.1);
}

function styleLine(name: string, font: string, size: number, brand: CaptionBrand, f: StyleFields, alignment: number, marginH: number, marginV: number): string {
  return `Style: ${name},${font},${size},${assColour(brand.text)},${assColour(brand.highlight)},${f.outlineColour},${f.backColour},${f.bold ? -1 : 0},0,0,0,100,100,0,0,${f.borderStyle},${f.outline},${f.shadow},${alignment},${marginH},${marginH},${marginV},${WHOLE_EVENT_BIDI}`;
}

export function buildAss(req: AssRequest): string {
  const { metrics, width, height } = req;
  const brand = req.brand ?? DEFAULT_BRAND;
  const language = req.language ?? null;
  const f = styleFields(req.style, metrics.fontSize, brand);
  const alignment = req.position === "bottom" ? 2 : 5;
  const marginV = req.position === "bottom" ? Math.round(height * 0.12) : 0;
  const marginH = Math.round(width * 0.07);
  const captionText = req.pages.map((page) => page.lines.map(lineText).join(" ")).join(" ");
  const styles = [styleLine("Caption", fontForText(brand.font, captionText, language), metrics.fontSize, brand, f, alignment, marginH, marginV)];
  const hook = req.hookTitle && req.hookTitle.text.trim() !== "" && req.hookTitle.seconds > 0 ? req.hookTitle : null;
  const hookSize = hookFontSize(metrics, width, height);
  if (hook) {
    // Bold with an outline, or on the box for the boxed style, so the title reads over any picture.
    const hookFields = req.style === "boxed" ? styleFields("boxed", hookSize, brand) : styleFields("bold", hookSize, brand);
    styles.push(styleLine("Hook", fontForText(brand.font, hook.text, language), hookSize, brand, { ...hookFields, bold: true }, 8, marginH, Math.round(hook.top)));
  }
  const header = [
    "[Script Info]",
    "ScriptType: v4.00+",
    `PlayResX: ${width}`,
    `PlayResY: ${height}`,
    // 2: no automatic wrapping; lines are broken by the layout only.
    "WrapStyle: 2",
    "ScaledBorderAndShadow: yes",
    "YCbCr Matrix: TV.709",
    "",
    "[V4+ Styles]",
    "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding",
    ...styles,
    "",
    "[Events]",
    "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text",
  ];
  const events: string[] = [];
  const dialogue = (start: number, end: number, text: string, style = "Caption", layer = 0) => {
    if (end - start < 0.01) return;
    events.push(`Dialogue: ${layer},${assTime(start)},${assTime(end)},${style},,0,0,0,,${text}`);
  };
  const highlight = colourTag(brand.highlight);
  const plain = colourTag(brand.text);
  const escapedLine = (line: CaptionPage["lines"][number], current: unknown) =>
    line.reduce((out, w, i) => {
      const gap = i === 0 || joinsWithoutSpace(line[i - 1]!.text, w.text) ? "" : " ";
      // The word being said, and the clip's key words (emphasis.ts), in the highlight colour.
      const word = w === current || w.emphasis === true ? `{\\c${highlight}}${escapeAssText(w.text)}{\\c${plain}}` : escapeAssText(w.text);
      return `${out}${gap}${word}`;
    }, "");
  for (const page of req.pages) {
    if (req.style !== "bold" || req.highlightWords === false) {
      dialogue(page.start, page.end, page.lines.map((line) => escapedLine(line, null)).join("\\N"));
      continue;
    }
    const words = page.lines.flat();
    words.forEach((current, k) => {
      const from = k === 0 ? page.start : current.start;
      const to = k === words.length - 1 ? page.end : words[k + 1]!.start;
      dialogue(from, to, page.lines.map((line) => escapedLine(line, current)).join("\\N"));
    });
  }
  if (hook) {
    const lineChars = Math.max(8, Math.floor((width * 0.86) / (hookSize * 0.62)));
    const lines = breakLines(hook.text, lineChars).slice(0, 3);
    dialogue(0, hook.seconds, lines.map(escapeAssText).join("\\N"), "Hook", 1);
  }
  return `${[...header, ...events].join("\n")}\n`;
}

/**
 * The `ass` filter for a file path, escaped for both levels ffmpeg parses:
 * the option value (\ ' :) and then the filter graph (\ ' [ ] , ;).
 */
export function assFilter(path: string): string {
  const optionLevel = path.replace(/[\\':]/g, (c) => `\\${c}`);
  const graphLevel = optionLevel.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
  return `ass=filename=${graphLevel}`;
}
