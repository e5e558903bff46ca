/**
 * Prompt matching by words, where no text-embedding model is reachable
 * (local stack, tests, a failing model): Okapi BM25 of the prompt against
 * each transcript sentence, over light stems, so "prices" matches "pricing"
 * and "price". Tokens are letters and digits of any script, lower-cased with
 * accents folded; scripts written without spaces (Chinese, Japanese, Thai)
 * are read as overlapping character pairs. Common function words of a few
 * languages are ignored. Paraphrases that share no stem with the prompt do
 * not match: that is what the embeddings path is for.
 */

const K1 = 1.2;
const B = 0.75;

/** Short, frequent words that say nothing about a topic (English, French, Spanish, German, Italian, Portuguese). */
const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have he her him his how i if in into is it its just " +
    "me my no not of on or our out over so some than that the their them then there these they this those to too up us very was we were " +
    "what when where which who why will with would you your about all also any because being more most much only other such what's it's " +
    "le la les un une des du de et est en que qui dans pour pas sur au aux ce ces il elle nous vous ils elles ou mais " +
    "el los las unos unas y es en que por para con no se lo como del al " +
    "der die das ein eine und ist im in den dem des zu mit nicht sich auf fur von " +
    "il lo gli uno una e di che per con non si da del della " +
    "o os um uma e do da em que para com nao se por " +
    // Words a prompt uses to ask, not to name a topic ("the parts about pricing").
    "part parts moment moments bit bits section sections segment segments clip clips where said say says talk talks talking discuss discussed discussion mention mentions mentioned"
  ).split(/\s+/),
);

const SPACELESS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}]/u;

/** A light suffix stripper for Latin-script words: enough to join inflections of one word. */
export function stem(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  for (const [suffix, replacement] of [
    ["ational", "ate"], ["ization", "ize"], ["fulness", "ful"], ["ousness", "ous"], ["iveness", "ive"],
    ["ations", "ate"], ["ation", "ate"], ["ments", ""], ["ment", ""], ["ness", ""], ["ings", ""], ["ing", ""],
    ["ies", "y"], ["ied", "y"], ["edly", ""], ["ed", ""], ["ers", ""], ["er", ""], ["ly", ""], ["es", ""], ["s", ""],
  ] as const) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      w = w.slice(0, w.length - suffix.length) + replacement;
      break;
    }
  }
  // "pricing" -> "pric", "price" -> "pric": a final e goes, doubled consonants collapse ("planning" -> "plan").
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  if (w.length > 3 && /([^aeiouy])\1$/.test(w)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith("y")) w = `${w.slice(0, -1)}i`;
  return w;
}

/** Index terms of a text. */
export function terms(text: string): string[] {
  const folded = text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
  const out: string[] = [];
  for (const token of folded.match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (SPACELESS.test(token)) {
      const chars = [...token];
      if (chars.length === 1) out.push(token);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
      continue;
    }
    if (STOPWORDS.has(token) || token.length < 2) continue;
    out.push(stem(token));
  }
  return out;
}

/** BM25 score of the query against each document (a sentence), 0 when they share no term. */
export function bm25(query: string, documents: string[]): number[] {
  const docs = documents.map(terms);
  const n = docs.length;
  const average = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(1, n);
  const frequency = new Map<string, number>();
  for (const doc of docs) for (const term of new Set(doc)) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  const queryTerms = [...new Set(terms(query))];
  return docs.map((doc) => {
    if (doc.length === 0) return 0;
    const counts = new Map<string, number>();
    for (const term of doc) counts.set(term, (counts.get(term) ?? 0) + 1);
    let score = 0;
    for (const term of queryTerms) {
      const tf = counts.get(term) ?? 0;
      if (tf === 0) continue;
      const df = frequency.get(term) ?? 0;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * doc.length) / Math.max(1, average)));
    }
    return score;
  });
}
