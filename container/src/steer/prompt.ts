/**
 * A job's prompt: the relevance of each transcript sentence in the
 * analysed window, by meaning (Workers AI embeddings through the Worker's
 * /similarity route) or, where those are not available, by words (BM25,
 * lexical.ts); then the clips (prompt-select.ts). The job's step says which.
 */
import { SIMILARITY_MAX_TEXTS, SIMILARITY_MAX_TEXT_CHARS, textBatches, type Transcript, type TranscriptSentence } from "#contract";
import { NoClipsFoundError } from "../analyse/index.ts";
import type { ScoredWindow } from "../analyse/select.ts";
import type { JobReporter } from "../channel/report.ts";
import type { Candidate } from "../shared/types.ts";
import { bm25 } from "./lexical.ts";
import { selectPromptClips, type PromptLimits } from "./prompt-select.ts";

export type MatchMethod = "meaning" | "words";

/**
 * bge-m3 cosines of text on the same topic sit well above those of unrelated
 * text, whose level varies with the prompt. Relevance is 0 up to a floor,
 * the larger of COSINE_FLOOR and the transcript's lower-quartile cosine plus
 * COSINE_MARGIN (most sentences of a long talk are about something else, so
 * that quartile is the unrelated level), and rises to 1 over COSINE_SPAN
 * above it. A calibration checked against the test stand-in only: the real
 * model cannot be reached from here (see container/README.md "Steering in the engine").
 */
const COSINE_FLOOR = 0.4;
const COSINE_MARGIN = 0.1;
const COSINE_SPAN = 0.3;
/** Characters per /similarity request, so one request is one model call (embeddings.ts). */
const REQUEST_CHARS = 16_000;

export interface PromptRequest {
  prompt: string;
  transcript: Transcript;
  limits: PromptLimits;
  maxClips: number;
  /** The analysis's scored windows, in source seconds: the video type's signal. */
  windows: ScoredWindow[];
  reporter: Pick<JobReporter, "similarity">;
  jobId: string;
}

export interface PromptOutcome {
  candidates: Candidate[];
  matches: number[];
  method: MatchMethod;
}

/** The sentences inside the window, in time order. */
export function windowSentences(transcript: Transcript, limits: PromptLimits): TranscriptSentence[] {
  return [...transcript.sentences]
    .filter((s) => (s.start + s.end) / 2 >= limits.from && (s.start + s.end) / 2 < limits.to && s.text.trim() !== "")
    .sort((a, b) => a.start - b.start);
}


/** Cosines from the Worker, or null when embeddings are not available (unavailable, failed). */
async function cosines(req: PromptRequest, texts: string[]): Promise<number[] | null> {
  const query = req.prompt.slice(0, SIMILARITY_MAX_TEXT_CHARS);
  const out: number[] = [];
  for (const batch of textBatches(texts.map((t) => t.slice(0, SIMILARITY_MAX_TEXT_CHARS)), SIMILARITY_MAX_TEXTS, REQUEST_CHARS)) {
    const answer = await req.reporter.similarity({ query, texts: batch });
    if (answer.kind !== "ok") return null;
    out.push(...answer.result.similarities);
  }
  return out;
}

function byWords(prompt: string, texts: string[]): number[] {
  const scores = bm25(prompt, texts);
  const best = Math.max(0, ...scores);
  return scores.map((s) => (best > 0 ? s / best : 0));
}

function byMeaning(cosines: number[]): number[] {
  const sorted = [...cosines].sort((a, b) => a - b);
  const quartile = sorted[Math.floor((sorted.length - 1) / 4)] ?? 0;
  const floor = Math.max(COSINE_FLOOR, quartile + COSINE_MARGIN);
  return cosines.map((c) => Math.min(1, Math.max(0, (c - floor) / COSINE_SPAN)));
}

/** The video type's signal over a span: the best analysis window that covers most of it, and its reasons. */
export function signalOf(windows: ScoredWindow[]): (start: number, end: number) => { score: number; reasons: string[] } {
  return (start, end) => {
    let best: ScoredWindow | null = null;
    for (const w of windows) {
      const overlap = Math.min(end, w.end) - Math.max(start, w.start);
      if (overlap < 0.5 * Math.min(end - start, w.end - w.start)) continue;
      if (!best || w.score > best.score) best = w;
    }
    return best ? { score: best.score, reasons: best.reasons } : { score: 0.5, reasons: [] };
  };
}

export async function promptClips(req: PromptRequest, onMethod: (method: MatchMethod) => void): Promise<PromptOutcome> {
  const sentences = windowSentences(req.transcript, req.limits);
  const texts = sentences.map((s) => s.text.trim());
  const quoted = `"${req.prompt.length > 80 ? `${req.prompt.slice(0, 77)}...` : req.prompt}"`;
  if (sentences.length === 0) throw new NoClipsFoundError(`The transcript has no sentences to match the prompt ${quoted} against.`);
  const fromWorker = await cosines(req, texts);
  const method: MatchMethod = fromWorker ? "meaning" : "words";
  onMethod(method);
  const relevance = fromWorker ? byMeaning(fromWorker) : byWords(req.prompt, texts);
  const signal = signalOf(req.windows);
  const choice = selectPromptClips({ sentences, relevance, limits: req.limits, maxClips: req.maxClips, signal: (s, e) => signal(s, e).score });
  if (choice.matchingSentences === 0 || choice.candidates.length === 0) {
    const how = method === "meaning" ? "in meaning" : "in its words (matched by words: no text embeddings on this deployment)";
    throw new NoClipsFoundError(
      choice.matchingSentences === 0
        ? `Nothing said in the video matches the prompt ${quoted} ${how}.`
        : `The moments that match the prompt ${quoted} are too short for a clip of ${req.limits.min}-${req.limits.max} s.`,
    );
  }
  const candidates = choice.candidates.map((c) => ({
    ...c,
    reasons: [...c.reasons, ...signal(c.start, c.end).reasons.filter((r) => r !== "pause_bounded")].slice(0, 8),
  }));
  return { candidates, matches: choice.matches, method };
}
