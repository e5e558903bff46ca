/**
 * Emphasis (docs/judgement.md): a model-judged clip's up to three key words
 * or phrases, marked on the caption pages' words so that burned captions
 * draw them in the highlight colour and the WebVTT wraps them in <b>. A
 * phrase is matched on whole words (case and punctuation aside), within one
 * page; the phrases are the clip's own words (the Worker keeps only those),
 * and the text drawn is always the transcript's, escaped as any caption.
 */
import type { CaptionPage, PageWord } from "./layout.ts";

function norm(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/** Pages with the words of every phrase marked; pages without any are returned as they were. */
export function markEmphasis(pages: CaptionPage[], phrases: readonly string[]): CaptionPage[] {
  const wanted = phrases.map((p) => p.split(/\s+/).map(norm).filter((w) => w !== "")).filter((p) => p.length > 0);
  if (wanted.length === 0) return pages;
  return pages.map((page) => {
    const words = page.lines.flat();
    const keys = words.map((w) => norm(w.text));
    const marked = new Set<PageWord>();
    for (const phrase of wanted) {
      for (let i = 0; i + phrase.length <= keys.length; i++) {
        if (phrase.every((w, k) => keys[i + k] === w)) for (let k = 0; k < phrase.length; k++) marked.add(words[i + k]!);
      }
    }
    if (marked.size === 0) return page;
    return { ...page, lines: page.lines.map((line) => line.map((w) => (marked.has(w) ? { ...w, emphasis: true } : w))) };
  });
}
