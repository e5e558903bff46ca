/**
 * Caption pages for one clip: the clip's words, grouped into pages of at most
 * two lines that fit the output width, timed from the clip's start. Burned
 * captions and sidecar files share these pages, so what a player shows from
 * the WebVTT file is what the picture shows.
 *
 * A page ends at a sentence end, before a pause, when its lines are full or
 * when it has been on screen long enough to read. Line width is estimated
 * from the font size with a conservative average glyph width (DejaVu Sans
 * Bold averages about 0.6 em per character of running text; CJK characters
 * count for their full em, script.ts), and the ASS style disables libass's
 * own wrapping, so lines are exactly these. Chinese and Japanese words are
 * split into characters, which join without spaces.
 *
 * Translated captions have no word times: each spoken sentence's
 * translation becomes one or more pages that share the sentence's time in
 * proportion to their length (sentencePages), so cues keep the spoken
 * sentences' times.
 */
import type { CaptionStyle, TranscriptWord } from "#contract";
import { joinPieces, joinsWithoutSpace, splitUnspaced, textWidth } from "./script.ts";

export interface PageWord {
  text: string;
  /** Seconds from the clip's start. */
  start: number;
  end: number;
  /** One of the clip's key words (emphasis.ts): drawn in the highlight colour, <b> in WebVTT. */
  emphasis?: boolean;
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

/** `sizePercent`: the configuration's caption_size, percent of the style's own size. */
export function captionMetrics(style: CaptionStyle, width: number, height: number, sizePercent = 100): CaptionMetrics {
  const fontSize = Math.max(12, Math.round((Math.min(width, height) * FONT_SHARE[style] * sizePercent) / 100));
  const lineChars = Math.max(8, Math.floor((width * LINE_WIDTH_SHARE) / (fontSize * CHAR_WIDTH_EM)));
  // Two lines at 1.3 line height stay far below a third of any accepted picture; the check keeps it so.
  const maxLines = Math.max(1, Math.min(2, Math.floor(height / 3 / (fontSize * 1.3))));
  return { fontSize, lineChars, maxLines };
}

/** Cuts text into pieces no wider than `maxWidth` (by characters, so no script is cut inside a letter's marks). */
function cutToWidth(text: string, maxWidth: number): string[] {
  const pieces: string[] = [];
  let piece = "";
  for (const char of text) {
    if (piece !== "" && !/\p{M}/u.test(char) && textWidth(piece + char) > maxWidth) {
      pieces.push(piece);
      piece = "";
    }
    piece += char;
  }
  if (piece !== "") pieces.push(piece);
  return pieces;
}

/**
 * Words that overlap the clip, in clip time, clamped to it. Chinese and
 * Japanese words become single characters (their time shared out by
 * width); a word wider than a line is cut.
 */
export function clipWords(words: TranscriptWord[], clipStart: number, clipEnd: number, lineChars: number): PageWord[] {
  const out: PageWord[] = [];
  for (const word of words) {
    const middle = (word.start + word.end) / 2;
    if (middle < clipStart || middle >= clipEnd) continue;
    const start = Math.max(0, word.start - clipStart);
    const end = Math.min(clipEnd - clipStart, Math.max(word.end - clipStart, start + 0.05));
    const text = word.text.replace(/\s+/g, " ").trim();
    if (text === "") continue;
    const pieces = splitUnspaced(text).flatMap((piece) => (textWidth(piece) <= lineChars ? [piece] : cutToWidth(piece, lineChars)));
    const total = pieces.reduce((sum, piece) => sum + Math.max(1, textWidth(piece)), 0);
    let at = start;
    for (const piece of pieces) {
      const share = ((end - start) * Math.max(1, textWidth(piece))) / total;
      out.push({ text: piece, start: at, end: at + share });
      at += share;
    }
  }
  return out;
}

// Latin, CJK, Devanagari (danda) and Arabic-script (question mark, full stop) sentence ends.
const SENTENCE_END = /[.?!…。？！।॥؟۔]["'”’)\]]*$/;

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
  const spaceBefore = (word: PageWord) => (line.length > 0 && !joinsWithoutSpace(line[line.length - 1]!.text, word.text) ? 1 : 0);
  words.forEach((word, i) => {
    const added = spaceBefore(word) + textWidth(word.text);
    if (line.length > 0 && lineLength + added > metrics.lineChars) {
      lines.push(line);
      line = [];
      lineLength = 0;
      if (lines.length >= metrics.maxLines) flush();
    }
    const pageStart = lines[0]?.[0]?.start ?? line[0]?.start ?? word.start;
    if ((lines.length > 0 || line.length > 0) && word.end - pageStart > MAX_PAGE_SECONDS) flush();
    lineLength += spaceBefore(word) + textWidth(word.text);
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

/** A line's words as text: spaces between words, none inside Chinese or Japanese. */
export function lineText(line: readonly PageWord[]): string {
  return joinPieces(line.map((w) => w.text));
}

export function pageText(page: CaptionPage, separator: string): string {
  return page.lines.map(lineText).join(separator);
}

/** Breaks text into lines of at most `lineChars` (width units), between words, or between characters of unspaced text. */
export function breakLines(text: string, lineChars: number): string[] {
  const pieces = text
    .replace(/\s+/g, " ")
    .trim()
    .split(" ")
    .filter((p) => p !== "")
    .flatMap((word) => splitUnspaced(word))
    .flatMap((piece) => (textWidth(piece) <= lineChars ? [piece] : cutToWidth(piece, lineChars)));
  const lines: string[][] = [];
  let line: string[] = [];
  for (const piece of pieces) {
    const candidate = joinPieces([...line, piece]);
    if (line.length > 0 && textWidth(candidate) > lineChars) {
      lines.push(line);
      line = [piece];
    } else {
      line.push(piece);
    }
  }
  if (line.length > 0) lines.push(line);
  return lines.map(joinPieces);
}

/** A spoken sentence as translated: its text in the caption language, its time as spoken (source seconds). */
export interface TimedText {
  text: string;
  start: number;
  end: number;
}

/**
 * Pages of translated sentences for one clip: each sentence whose middle is
 * inside the clip is broken into lines, grouped `maxLines` to a page; the
 * sentence's spoken time (clamped to the clip) is shared among its pages by
 * width, so its first page starts and its last page ends when the sentence
 * was spoken. Each page is one "word" (no per-word times exist in the
 * target language).
 */
export function sentencePages(sentences: readonly TimedText[], metrics: CaptionMetrics, clipStart: number, clipEnd: number): CaptionPage[] {
  const pages: CaptionPage[] = [];
  for (const sentence of sentences) {
    const middle = (sentence.start + sentence.end) / 2;
    if (middle < clipStart || middle >= clipEnd) continue;
    const start = Math.max(0, sentence.start - clipStart);
    const end = Math.min(clipEnd - clipStart, Math.max(sentence.end - clipStart, start + 0.3));
    const lines = breakLines(sentence.text, metrics.lineChars);
    const groups: string[][] = [];
    for (let i = 0; i < lines.length; i += metrics.maxLines) groups.push(lines.slice(i, i + metrics.maxLines));
    const total = groups.reduce((sum, g) => sum + Math.max(1, textWidth(g.join(""))), 0);
    let at = start;
    groups.forEach((group, i) => {
      const to = i === groups.length - 1 ? end : at + ((end - start) * Math.max(1, textWidth(group.join("")))) / total;
      pages.push({ start: at, end: to, lines: group.map((text) => [{ text, start: at, end: to }]) });
      at = to;
    });
  }
  return pages;
}
