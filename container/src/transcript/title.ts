/**
 * A clip's text and title from its own words, with no language model: the
 * title is one sentence of the clip, preferring a question (a clip that
 * opens with one is about it), then sentences of a readable length with many
 * content words, then earlier ones. Fillers at the start are dropped and the
 * line is cut at a word boundary to fit.
 */
import type { TranscriptSentence, TranscriptWord } from "#contract";

export const MAX_TITLE_CHARS = 120;
const TITLE_TARGET_CHARS = 80;
const MAX_TEXT_CHARS = 10_000;

const FILLERS = /^(?:(?:so|and|but|um+|uh+|er+|ah+|well|like|okay|ok|yeah|right|you know|i mean|anyway|now)[\s,.…-]+)+/i;
const STOPWORDS = new Set(
  "a an the and or but so of to in on at for with is are was were be been it its this that these those i you he she we they me my your our their his her them us do does did have has had not no yes just very really than then there here what which who how why when where as if by from about into over up out".split(" "),
);

const inside = (t: { start: number; end: number }, start: number, end: number) => (t.start + t.end) / 2 >= start && (t.start + t.end) / 2 < end;

export function clipText(words: TranscriptWord[], start: number, end: number): string | null {
  const text = words.filter((w) => inside(w, start, end)).map((w) => w.text).join(" ").trim();
  if (text === "") return null;
  return text.length > MAX_TEXT_CHARS ? `${text.slice(0, MAX_TEXT_CHARS - 1)}…` : text;
}

function cleanLine(text: string): string {
  let line = text.replace(/\s+/g, " ").trim().replace(FILLERS, "").replace(/^[-–—,.;:…\s]+/, "");
  const question = /\?["'”’)]*$/.test(line);
  line = line.replace(/[\s,.;:…!-]+$/, "");
  if (line.length > TITLE_TARGET_CHARS) {
    const cut = line.slice(0, TITLE_TARGET_CHARS);
    const space = cut.lastIndexOf(" ");
    line = `${(space > 20 ? cut.slice(0, space) : cut).replace(/[\s,.;:-]+$/, "")}…`;
  } else if (question && !line.endsWith("?")) {
    line = `${line}?`;
  }
  if (line === "") return "";
  return (line[0]!.toUpperCase() + line.slice(1)).slice(0, MAX_TITLE_CHARS);
}

function contentShare(text: string): number {
  const tokens = text.toLowerCase().split(/[^\p{L}\p{N}']+/u).filter((t) => t !== "");
  if (tokens.length === 0) return 0;
  return tokens.filter((t) => !STOPWORDS.has(t)).length / tokens.length;
}

export function clipTitle(sentences: TranscriptSentence[], words: TranscriptWord[], start: number, end: number): string | null {
  const own = sentences.filter((s) => inside(s, start, end));
  let best: { line: string; score: number } | null = null;
  own.forEach((sentence, i) => {
    const line = cleanLine(sentence.text);
    const count = line.split(" ").length;
    if (line === "" || count < 3) return;
    const score =
      (/\?$/.test(line) ? 1.5 : 0) +
      (count >= 5 && count <= 14 ? 1 : 0) +
      2 * contentShare(line) -
      0.15 * i;
    if (!best || score > best.score) best = { line, score };
  });
  if (best) return (best as { line: string }).line;
  const text = clipText(words, start, end);
  if (!text) return null;
  const line = cleanLine(text.split(" ").slice(0, 12).join(" "));
  return line === "" ? null : line;
}
