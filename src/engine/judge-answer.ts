/**
 * A judging model's answer, read field by field (docs/judgement.md). The
 * model's output per its page: `{response, usage?}` where `response` is a
 * string (JSON mode fills it with the JSON text; the JSON mode page shows it
 * already parsed), or a bare string. Whatever the model says is bound here:
 * only ids of the window's own candidates count, scores are integers 0-100,
 * edges are sentence numbers of that candidate (so they stay inside it and
 * inside the source), text is cleaned and cut to its limit, hashtags are
 * rebuilt from letters and digits, and emphasis is kept only when the words
 * are the candidate's own. A field that fails is null (signals decide it);
 * the rest of the answer still counts.
 */
import { z } from "zod";
import {
  HASHTAG_PATTERN,
  MAX_CHAPTER_TITLE_CHARS,
  MAX_EMPHASIS,
  MAX_EMPHASIS_CHARS,
  MAX_HASHTAGS,
  MAX_JUDGE_REASON_CHARS,
  MAX_POST_DESCRIPTION_CHARS,
  MAX_POST_TITLE_CHARS,
  type ClipScores,
  type JudgeCandidate,
  type JudgeSection,
  type JudgeVerdict,
} from "#contract";

const Usage = z.object({ prompt_tokens: z.number().nonnegative().optional(), completion_tokens: z.number().nonnegative().optional() }).loose();
const Output = z.union([z.string(), z.object({ response: z.unknown(), usage: Usage.optional() }).loose()]);

export interface ReadAnswer {
  /** The answer's JSON object, or null when there was none to read. */
  body: Record<string, unknown> | null;
  usage: { tokensIn: number | null; tokensOut: number | null };
}

function parseJsonText(text: string): unknown {
  // Some models fence their JSON even in JSON mode.
  const unfenced = text.trim().replace(/^```(?:json)?\s*/i, "").replace(/\s*```$/, "");
  try {
    return JSON.parse(unfenced);
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The model's output as documented, to its JSON body and token counts. */
export function readModelOutput(output: unknown): ReadAnswer {
  const parsed = Output.safeParse(output);
  if (!parsed.success) return { body: null, usage: { tokensIn: null, tokensOut: null } };
  if (typeof parsed.data === "string") {
    const body = parseJsonText(parsed.data);
    return { body: isObject(body) ? body : null, usage: { tokensIn: null, tokensOut: null } };
  }
  const response = parsed.data.response;
  const body = typeof response === "string" ? parseJsonText(response) : response;
  const usage = parsed.data.usage;
  return {
    body: isObject(body) ? body : null,
    usage: { tokensIn: usage?.prompt_tokens ?? null, tokensOut: usage?.completion_tokens ?? null },
  };
}

/** Text the model wrote, made safe to store: no control characters, one space between words. */
export function cleanText(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const text = value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ").replace(/\s+/g, " ").trim();
  return text === "" ? null : text;
}

/** Cut at a word boundary where one is near, with an ellipsis. */
export function cutTo(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const head = chars.slice(0, max - 1).join("");
  const space = head.lastIndexOf(" ");
  return `${(space > max * 0.6 ? head.slice(0, space) : head).trimEnd()}…`;
}

function boundedText(value: unknown, max: number): string | null {
  const text = cleanText(value);
  return text === null ? null : cutTo(text, max);
}

/** One to three sentences. */
function description(value: unknown): string | null {
  const text = cleanText(value);
  if (text === null) return null;
  const sentences = text.match(/[^.!?…。！？]+[.!?…。！？]*/gu) ?? [text];
  return cutTo(sentences.slice(0, 3).join("").trim(), MAX_POST_DESCRIPTION_CHARS);
}

function score(value: unknown): number | null {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 100) return null;
  return Math.round(value);
}

function scores(item: Record<string, unknown>): ClipScores | null {
  const hook = score(item.hook);
  const payoff = score(item.payoff);
  const standalone = score(item.standalone);
  const energy = score(item.energy);
  if (hook === null || payoff === null || standalone === null || energy === null) return null;
  return { hook, payoff, standalone, energy };
}

function hashtags(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const raw of value) {
    if (typeof raw !== "string") continue;
    const tag = `#${raw.replace(/[^\p{L}\p{N}_]/gu, "")}`;
    if (!HASHTAG_PATTERN.test(tag) || out.some((t) => t.toLowerCase() === tag.toLowerCase())) continue;
    out.push(tag);
    if (out.length >= MAX_HASHTAGS) break;
  }
  return out;
}

function emphasis(value: unknown, candidate: JudgeCandidate): string[] {
  if (!Array.isArray(value)) return [];
  const spoken = candidate.sentences.map((s) => s.text.toLowerCase()).join(" ");
  const out: string[] = [];
  for (const raw of value) {
    const words = cleanText(raw);
    if (words === null || Array.from(words).length > MAX_EMPHASIS_CHARS) continue;
    // Only the clip's own words can be emphasised: the model cannot add text to the captions.
    if (!spoken.includes(words.toLowerCase()) || out.some((w) => w.toLowerCase() === words.toLowerCase())) continue;
    out.push(words);
    if (out.length >= MAX_EMPHASIS) break;
  }
  return out;
}

function sentenceIndex(value: unknown, count: number): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value < count ? value : null;
}

/** Tighter edges from the candidate's sentence numbers; null when either is missing or they cross. */
function edges(item: Record<string, unknown>, candidate: JudgeCandidate): { start: number; end: number } | null {
  const first = sentenceIndex(item.start_sentence, candidate.sentences.length);
  const last = sentenceIndex(item.end_sentence, candidate.sentences.length);
  if (first === null || last === null || last < first) return null;
  const start = Math.max(candidate.start, candidate.sentences[first]!.start);
  const end = Math.min(candidate.end, candidate.sentences[last]!.end);
  if (end <= start) return null;
  // Unchanged edges are no news.
  if (Math.abs(start - candidate.start) < 0.01 && Math.abs(end - candidate.end) < 0.01) return null;
  return { start, end };
}

/** The verdicts of one window's candidates that the answer names; each id once (the first entry counts). */
export function verdictsOf(body: Record<string, unknown>, candidates: readonly JudgeCandidate[]): JudgeVerdict[] {
  const clips = Array.isArray(body.clips) ? body.clips : [];
  const byId = new Map(candidates.map((c) => [c.id, c]));
  const out = new Map<number, JudgeVerdict>();
  for (const item of clips) {
    if (!isObject(item) || typeof item.id !== "number") continue;
    const candidate = byId.get(item.id);
    if (!candidate || out.has(candidate.id)) continue;
    const edge = edges(item, candidate);
    out.set(candidate.id, {
      id: candidate.id,
      scores: scores(item),
      reason: boundedText(item.reason, MAX_JUDGE_REASON_CHARS),
      start: edge?.start ?? null,
      end: edge?.end ?? null,
      title: boundedText(item.title, MAX_POST_TITLE_CHARS),
      description: description(item.description),
      hashtags: hashtags(item.hashtags),
      emphasis: emphasis(item.keywords, candidate),
    });
  }
  return [...out.values()];
}

/** Chapter titles the answer gives the window's sections. */
export function chaptersOf(body: Record<string, unknown>, sections: readonly JudgeSection[]): { id: number; title: string }[] {
  const list = Array.isArray(body.chapters) ? body.chapters : [];
  const ids = new Set(sections.map((s) => s.id));
  const out = new Map<number, string>();
  for (const item of list) {
    if (!isObject(item) || typeof item.id !== "number" || !ids.has(item.id) || out.has(item.id)) continue;
    const title = boundedText(item.title, MAX_CHAPTER_TITLE_CHARS);
    if (title !== null) out.set(item.id, title);
  }
  return [...out].map(([id, title]) => ({ id, title }));
}
