/**
 * Caption pages for one clip: the clip's words, grouped into pages of at most
 * two lines that fit the output width, timed from the clip's start. Burned
 * captions and sidecar files share these pages, so what a player shows from
 * the WebVTT file is what the picture shows.
 *
 * A page ends at a sentence end, before a pause, when its lines are full or
 * when it has been on screen long enough to read. Line width is estimated
 * from the font size with a conservative average glyph width (DejaVu Sans
 * Bold averages about 0.6 em per character of running text), and the ASS
 * style disables libass's own wrapping, so lines are exactly these.
 */
import type { CaptionStyle, TranscriptWord } from "#contract";

export interface PageWord {
  text: string;
  /** Seconds from the clip's start. */
  start: number;
  end: number;
}

export interface CaptionPage {
  start: number;
  end: number;
  lines: PageWord[][];
}

export interface CaptionMetrics {
  fontSize: number;
  /** Characters that fit on one line. */
  lineChars: number;
  maxLines: number;
}

/** Average glyph advance as a fraction of the font size (bold, with outline): errs wide. */
const CHAR_WIDTH_EM = 0.62;
/** Share of the width a line may use (margins on both sides). */
const LINE_WIDTH_SHARE = 0.86;
const MAX_PAGE_SECONDS = 3.5;
const PAUSE_BREAK_SECONDS = 0.7;
/** Font size as a share of the picture's shorter side. */
const FONT_SHARE: Record<CaptionStyle, number> = { bold: 0.07, clean: 0.055, boxed: 0.055 };

export function captionMetrics(style: CaptionStyle, width: number, height: number): CaptionMetrics {
  const fontSize = Math.max(12, Math.round(Math.min(width, height) * FONT_SHARE[style]));
  const lineChars = Math.max(8, Math.floor((width * LINE_WIDTH_SHARE) / (fontSize * CHAR_WIDTH_EM)));
  // Two lines at 1.3 line height stay far below a third of any accepted picture; the check keeps it so.
  const maxLines = Math.max(1, Math.min(2, Math.floor(height / 3 / (fontSize * 1.3))));
  return { fontSize, lineChars, maxLines };
}

/** Words that overlap the clip, in clip time, clamped to it; a word longer than a line is split. */
export function clipWords(words: TranscriptWord[], clipStart: number, clipEnd: number, lineChars: number): PageWord[] {
  const out: PageWord[] = [];
  for (const word of words) {
    const middle = (word.start + word.end) / 2;
    if (middle < clipStart || middle >= clipEnd) continue;
    const start = Math.max(0, word.start - clipStart);
    const end = Math.min(clipEnd - clipStart, Math.max(word.end - clipStart, start + 0.05));
    const text = word.text.replace(/\s+/g, " ").trim();
    if (text === "") continue;
    if (text.length <= lineChars) {
      out.push({ text, start, end });
      continue;
    }
    const pieces = Math.ceil(text.length / lineChars);
    for (let i = 0; i < pieces; i++) {
      const share = (end - start) / pieces;
      out.push({ text: text.slice(i * lineChars, (i + 1) * lineChars), start: start + i * share, end: start + (i + 1) * share });
    }
  }
  return out;
}

const SENTENCE_END = /[.?!…。？！]["'”’)\]]*$/;

export function layoutPages(words: PageWord[], metrics: CaptionMetrics, clipDuration: number): CaptionPage[] {
  const pages: CaptionPage[] = [];
  let lines: PageWord[][] = [];
  let line: PageWord[] = [];
  let lineLength = 0;
  const flush = () => {
    if (line.length > 0) lines.push(line);
    if (lines.length > 0) {
      const first = lines[0]![0]!;
      const lastLine = lines[lines.length - 1]!;
      pages.push({ start: first.start, end: lastLine[lastLine.length - 1]!.end, lines });
    }
    lines = [];
    line = [];
    lineLength = 0;
  };
  words.forEach((word, i) => {
    const added = (line.length > 0 ? 1 : 0) + word.text.length;
    if (line.length > 0 && lineLength + added > metrics.lineChars) {
      lines.push(line);
      line = [];
      lineLength = 0;
      if (lines.length >= metrics.maxLines) flush();
    }
    const pageStart = lines[0]?.[0]?.start ?? line[0]?.start ?? word.start;
    if ((lines.length > 0 || line.length > 0) && word.end - pageStart > MAX_PAGE_SECONDS) flush();
    lineLength += (line.length > 0 ? 1 : 0) + word.text.length;
    line.push(word);
    const next = words[i + 1];
    if (SENTENCE_END.test(word.text) || (next && next.start - word.end >= PAUSE_BREAK_SECONDS)) flush();
  });
  flush();
  // A page stays up until the next one starts, when that is soon (no flicker between pages).
  pages.forEach((page, i) => {
    const next = pages[i + 1];
    if (next && next.start - page.end < PAUSE_BREAK_SECONDS) page.end = next.start;
    else page.end = page.end + 0.3;
    if (next) page.end = Math.min(page.end, next.start);
    page.end = Math.min(page.end, clipDuration);
  });
  return pages;
}

export function pageText(page: CaptionPage, separator: string): string {
  return page.lines.map((l) => l.map((w) => w.text).join(" ")).join(separator);
}
