/**
 * The ASS subtitle document libass draws into a clip. Three presets:
 * - bold: large bold white text with a thick black outline; the word being
 *   said is drawn in yellow (one event per word, each showing the page with
 *   that word highlighted);
 * - clean: regular white text with a soft drop shadow;
 * - boxed: white text on a translucent dark box (BorderStyle 3).
 * Position bottom sits above the lower 12% of the picture (clear of the
 * platforms' own overlays); center is the middle.
 *
 * Transcript text is data, never markup: escapeAssText leaves no `{`, `}` or
 * backslash, so no override tag (\pos, \N, \h, drawing mode...) can come
 * from a transcript; the only tags in the file are the engine's own.
 */
import type { CaptionPosition, CaptionStyle } from "#contract";
import type { CaptionMetrics, CaptionPage } from "./layout.ts";

export const CAPTION_FONT = "DejaVu Sans";
/** ASS colours are &HAABBGGRR, AA = 00 opaque. */
const WHITE = "&H00FFFFFF";
const BLACK = "&H00000000";
const HIGHLIGHT = "&H0000E5FF";
/** Colour override tags take &HBBGGRR& (no alpha). */
const HIGHLIGHT_TAG = "&H00E5FF&";
const WHITE_TAG = "&HFFFFFF&";

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

interface StyleFields {
  bold: boolean;
  outlineColour: string;
  backColour: string;
  borderStyle: 1 | 3;
  outline: number;
  shadow: number;
}

function styleFields(style: CaptionStyle, fontSize: number): StyleFields {
  switch (style) {
    case "bold":
      return { bold: true, outlineColour: BLACK, backColour: "&H80000000", borderStyle: 1, outline: Math.max(2, Math.round(fontSize * 0.09)), shadow: 0 };
    case "clean":
      return { bold: false, outlineColour: "&H40000000", backColour: "&H60000000", borderStyle: 1, outline: Math.max(1, Math.round(fontSize * 0.02)), shadow: Math.max(1, Math.round(fontSize * 0.06)) };
    case "boxed":
      // With BorderStyle 3 libass fills the box with OutlineColour; Outline is the box's padding.
      return { bold: false, outlineColour: "&H50000000", backColour: "&H50000000", borderStyle: 3, outline: Math.max(2, Math.round(fontSize * 0.22)), shadow: 0 };
  }
}

export interface AssRequest {
  pages: CaptionPage[];
  metrics: CaptionMetrics;
  style: CaptionStyle;
  position: CaptionPosition;
  width: number;
  height: number;
}

export function buildAss(req: AssRequest): string {
  const { metrics, width, height } = req;
  const f = styleFields(req.style, metrics.fontSize);
  const alignment = req.position === "bottom" ? 2 : 5;
  const marginV = req.position === "bottom" ? Math.round(height * 0.12) : 0;
  const marginH = Math.round(width * 0.07);
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
    `Style: Caption,${CAPTION_FONT},${metrics.fontSize},${WHITE},${HIGHLIGHT},${f.outlineColour},${f.backColour},${f.bold ? -1 : 0},0,0,0,100,100,0,0,${f.borderStyle},${f.outline},${f.shadow},${alignment},${marginH},${marginH},${marginV},1`,
    "",
    "[Events]",
    "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text",
  ];
  const events: string[] = [];
  const dialogue = (start: number, end: number, text: string) => {
    if (end - start < 0.01) return;
    events.push(`Dialogue: 0,${assTime(start)},${assTime(end)},Caption,,0,0,0,,${text}`);
  };
  for (const page of req.pages) {
    if (req.style !== "bold") {
      dialogue(page.start, page.end, page.lines.map((line) => line.map((w) => escapeAssText(w.text)).join(" ")).join("\\N"));
      continue;
    }
    const words = page.lines.flat();
    words.forEach((current, k) => {
      const from = k === 0 ? page.start : current.start;
      const to = k === words.length - 1 ? page.end : words[k + 1]!.start;
      const text = page.lines
        .map((line) => line.map((w) => (w === current ? `{\\c${HIGHLIGHT_TAG}}${escapeAssText(w.text)}{\\c${WHITE_TAG}}` : escapeAssText(w.text))).join(" "))
        .join("\\N");
      dialogue(from, to, text);
    });
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
