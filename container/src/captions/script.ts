/**
 * What the caption layout needs to know about writing systems:
 *
 * - width: a Han, kana, Hangul or fullwidth character is about one em wide,
 *   where the layout's average Latin character is 0.62 em, so it counts as
 *   1.6 characters; combining marks (Devanagari vowel signs, Arabic
 *   harakat) take no room of their own;
 * - spacing: Chinese and Japanese put no spaces between words, so their text
 *   is split into characters (punctuation kept with the character before it)
 *   and joined back without spaces;
 * - direction: Arabic and Hebrew script are right to left;
 * - font: a caption font without the script's letters is swapped for the
 *   matching Noto font (fonts-noto-core, fonts-noto-cjk), sans or serif as
 *   chosen.
 */
import type { CaptionFont } from "#contract";

const WIDE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303F\uFF01-\uFF60\uFFE0-\uFFE6]/u;
/** Characters written without spaces between words: each one may start a line. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303F\uFF01-\uFF60]/u;
/** Closing punctuation that stays with the character before it. */
const CLOSING = /^[\u3001\u3002\uFF0C\uFF0E\uFF01\uFF1F\uFF1A\uFF1B\u300D\u300F\u3011\uFF09\u30FC.,!?:;)\]」』】]$/u;
const MARK = /\p{M}/u;

/** Width in average Latin characters (the unit of CaptionMetrics.lineChars). */
export function textWidth(text: string): number {
  let width = 0;
  for (const char of text) {
    if (MARK.test(char)) continue;
    width += WIDE.test(char) ? 1.6 : 1;
  }
  return width;
}

/** True when no space belongs between `left` and `right` (two pieces of unspaced text). */
export function joinsWithoutSpace(left: string, right: string): boolean {
  const last = [...left].at(-1) ?? "";
  const first = [...right][0] ?? "";
  return (UNSPACED.test(last) || CLOSING.test(last)) && UNSPACED.test(first);
}

/** Joins pieces of a line: spaces between words, none inside Chinese or Japanese text. */
export function joinPieces(pieces: readonly string[]): string {
  let out = "";
  for (const piece of pieces) {
    out = out === "" ? piece : `${out}${joinsWithoutSpace(out, piece) ? "" : " "}${piece}`;
  }
  return out;
}

/**
 * A word of unspaced text as pieces a line may break between: each Han or
 * kana character alone (with any closing punctuation after it), runs of
 * other characters (Latin words inside Chinese, numbers) kept whole.
 */
export function splitUnspaced(word: string): string[] {
  if (!UNSPACED.test(word)) return [word];
  const pieces: string[] = [];
  let run = "";
  for (const char of word) {
    if (CLOSING.test(char) && (pieces.length > 0 || run !== "")) {
      if (run !== "") run += char;
      else pieces[pieces.length - 1] += char;
      continue;
    }
    if (UNSPACED.test(char)) {
      if (run !== "") pieces.push(run);
      run = "";
      pieces.push(char);
    } else {
      run += char;
    }
  }
  if (run !== "") pieces.push(run);
  return pieces;
}

export type Script = "cjk" | "hangul" | "arabic" | "hebrew" | "devanagari";

const SCRIPT_TESTS: [Script, RegExp][] = [
  ["cjk", /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ["hangul", /\p{Script=Hangul}/u],
  ["arabic", /\p{Script=Arabic}/u],
  ["hebrew", /\p{Script=Hebrew}/u],
  ["devanagari", /\p{Script=Devanagari}/u],
];

/** The non-Latin script most of the text's letters are in (only those needing a font of their own), or null. */
export function dominantScript(text: string): Script | null {
  const counts = new Map<Script, number>();
  let letters = 0;
  for (const char of text) {
    if (!/\p{L}/u.test(char)) continue;
    letters++;
    for (const [script, test] of SCRIPT_TESTS) {
      if (test.test(char)) {
        counts.set(script, (counts.get(script) ?? 0) + 1);
        break;
      }
    }
  }
  let best: Script | null = null;
  let most = 0;
  for (const [script, n] of counts) {
    if (n > most) {
      best = script;
      most = n;
    }
  }
  // A few borrowed characters in Latin text do not change the font.
  return best !== null && most * 4 >= letters ? best : null;
}

/** Right-to-left text: the page is laid out as one right-to-left run. */
export function isRightToLeft(text: string): boolean {
  const script = dominantScript(text);
  return script === "arabic" || script === "hebrew";
}

const CJK_FONTS: readonly string[] = ["Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK JP", "Noto Sans CJK KR", "Noto Serif CJK SC"];
const COVERS: Record<Script, readonly string[]> = {
  cjk: CJK_FONTS,
  hangul: CJK_FONTS,
  arabic: ["Noto Sans Arabic", "Noto Naskh Arabic"],
  hebrew: ["Noto Sans Hebrew"],
  devanagari: ["Noto Sans Devanagari"],
};
const SERIF: readonly string[] = ["DejaVu Serif", "Noto Serif", "Noto Serif CJK SC", "Noto Naskh Arabic"];

/** Which CJK font by language: Japanese and Korean forms differ from Chinese ones. */
function cjkFont(language: string | null, serif: boolean): string {
  if (serif) return "Noto Serif CJK SC";
  if (language === "ja") return "Noto Sans CJK JP";
  if (language === "ko") return "Noto Sans CJK KR";
  return "Noto Sans CJK SC";
}

/**
 * The font family to draw `text` with: the chosen caption font when it has
 * the script's letters, else the matching Noto font. Latin, Cyrillic and
 * Greek are in every caption font; other scripts (Thai, Bengali...) are
 * found by fontconfig's fallback among the installed Noto fonts.
 */
export function fontForText(chosen: CaptionFont, text: string, language: string | null): string {
  const script = dominantScript(text);
  if (script === null || COVERS[script].includes(chosen)) return chosen;
  const serif = SERIF.includes(chosen);
  switch (script) {
    case "cjk":
    case "hangul":
      return script === "hangul" ? "Noto Sans CJK KR" : cjkFont(language, serif);
    case "arabic":
      return serif ? "Noto Naskh Arabic" : "Noto Sans Arabic";
    case "hebrew":
      return "Noto Sans Hebrew";
    case "devanagari":
      return "Noto Sans Devanagari";
  }
}
