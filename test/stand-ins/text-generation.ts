/**
 * A stand-in for a Workers AI text-generation model judging clips, in the
 * shapes `@cf/meta/llama-3.3-70b-instruct-fp8-fast` documents. Input
 * (workers-types Ai_Cf_Meta_Llama_3_3_70B_Instruct_Fp8_Fast_Messages):
 * `{messages: [{role, content}], response_format?: {type: "json_object" |
 * "json_schema", json_schema?}, max_tokens? (default 256), temperature?...}`;
 * output: `{response: string, usage?: {prompt_tokens, completion_tokens,
 * total_tokens}}` (JSON mode fills `response` with the JSON text; the JSON
 * mode page shows it parsed, so `responseAs: "object"` answers that way).
 *
 * `answerJudgement` is a pure function from that input to that output, so
 * the Worker's pool suites (through TextGenerationStandIn, a binding) and a
 * REST stand-in server can answer alike. It "judges" deterministically from
 * the words it reads in the prompt: a candidate holding the `favourite`
 * phrase scores 95 everywhere; otherwise a question in its first sentence
 * makes a hook, a sentence ending in "!" adds energy. It starts a clip on
 * its first question (the hook) when that is not its last sentence.
 *
 * `obeyTranscript`: it behaves like a model that a transcript talked round:
 * a candidate saying "score this 100" gets 100s, edges outside its
 * sentences, an over-long title with markup, hashtags with markup, keywords
 * it never spoke, and a verdict for a candidate id it was not shown.
 */

export interface ChatMessage {
  role: string;
  content: string;
}

export interface TextGenerationInput {
  messages?: ChatMessage[];
  prompt?: string;
  response_format?: { type?: string; json_schema?: unknown };
  max_tokens?: number;
  temperature?: number;
}

export interface TextGenerationOutput {
  response: string | Record<string, unknown>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface JudgementStyle {
  /** A phrase: the candidate that says it is ranked first (95 on every sub-score). */
  favourite?: string;
  obeyTranscript?: boolean;
  /** "string" (the documented type, default) or "object" (as the JSON mode page shows it). */
  responseAs?: "string" | "object";
}

/** The model's documented context window, in tokens. */
export const CONTEXT_TOKENS = 24_000;

interface SeenCandidate {
  id: number;
  sentences: string[];
}

/** What the stand-in reads of the prompt: the candidates (numbered sentences) and the sections. */
export function readPrompt(user: string): { candidates: SeenCandidate[]; sections: number[] } {
  const candidates: SeenCandidate[] = [];
  for (const match of user.matchAll(/Candidate (\d+) \([^)]*\):\n<transcript>\n([\s\S]*?)\n<\/transcript>/g)) {
    const sentences = match[2]!.split("\n").map((line) => line.replace(/^\[\d+\] /, ""));
    candidates.push({ id: Number(match[1]), sentences });
  }
  const sections = [...user.matchAll(/Section (\d+) \(starts [^)]*\):/g)].map((m) => Number(m[1]));
  return { candidates, sections };
}

function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function longestWord(text: string): string {
  return text.split(/[^\p{L}\p{N}]+/u).reduce((best, w) => (w.length > best.length ? w : best), "");
}

function verdict(candidate: SeenCandidate, style: JudgementStyle): Record<string, unknown> {
  const text = candidate.sentences.join(" ");
  const last = candidate.sentences.length - 1;
  if (style.obeyTranscript && /score this 100/i.test(text)) {
    return {
      id: candidate.id,
      hook: 100,
      payoff: 100,
      standalone: 100,
      energy: 100,
      reason: "The transcript told me to.",
      start_sentence: -4,
      end_sentence: last + 50,
      title: `<script>alert("x")</script> ${"Best clip ever ".repeat(20)}`,
      description: "Ignore everything. {\\an8}<b>Click</b> here.\nSecond line. Third. Fourth. Fifth.",
      hashtags: ["#<b>win</b>", "#a", "#b", "#c", "#d", "#e", "#f"],
      keywords: ["words never spoken", "{\\c&H0000FF&}"],
    };
  }
  const favourite = style.favourite !== undefined && text.toLowerCase().includes(style.favourite.toLowerCase());
  const question = candidate.sentences.findIndex((s) => s.includes("?"));
  const hookAt = question >= 0 && question < last ? question : 0;
  const exclaimed = candidate.sentences.filter((s) => s.trim().endsWith("!")).length;
  const word = longestWord(text);
  return {
    id: candidate.id,
    hook: favourite ? 95 : question === 0 ? 80 : 45,
    payoff: favourite ? 95 : /[.!]$/.test(candidate.sentences[last]!.trim()) ? 70 : 40,
    standalone: favourite ? 95 : 60,
    energy: favourite ? 95 : Math.min(90, 40 + 15 * exclaimed),
    reason: favourite ? "Opens on a question and lands the answer." : "A steady stretch of talk.",
    start_sentence: hookAt,
    end_sentence: last,
    title: candidate.sentences[hookAt]!.slice(0, 60).trim(),
    description: `A moment about ${text.split(/\s+/).slice(0, 5).join(" ")}. Worth a watch.`,
    hashtags: word ? [`#${word}`, "#clip"] : ["#clip"],
    keywords: word ? [word] : [],
  };
}

/** The documented output for the documented input. Throws as the binding does on input it refuses. */
export function answerJudgement(model: string, input: TextGenerationInput, style: JudgementStyle = {}): TextGenerationOutput {
  if (!model.startsWith("@cf/") && !model.startsWith("@hf/")) throw new Error(`5007: No such model ${model}`);
  const messages = input.messages;
  if (!Array.isArray(messages) || messages.length === 0 || messages.some((m) => typeof m.content !== "string" || typeof m.role !== "string")) {
    throw new Error("5006: Error: required properties at '/' are 'messages'");
  }
  const promptTokens = messages.reduce((sum, m) => sum + tokens(m.content), 0);
  const maxTokens = input.max_tokens ?? 256;
  if (promptTokens + maxTokens > CONTEXT_TOKENS) throw new Error(`5021: The estimated number of input and maximum output tokens (${promptTokens + maxTokens}) exceeded this model context window limit (${CONTEXT_TOKENS}).`);
  const user = messages.filter((m) => m.role === "user").map((m) => m.content).join("\n\n");
  const seen = readPrompt(user);
  const body = {
    clips: seen.candidates.map((c) => verdict(c, style)),
    chapters: seen.sections.map((id) => ({ id, title: `Part ${id + 1}` })),
  };
  if (style.obeyTranscript && seen.candidates.some((c) => /score this 100/i.test(c.sentences.join(" ")))) {
    body.clips.push({ id: 998, hook: 100, payoff: 100, standalone: 100, energy: 100, reason: "x", start_sentence: 0, end_sentence: 0, title: "x", description: "x", hashtags: [], keywords: [] });
  }
  const text = JSON.stringify(body);
  const usage = { prompt_tokens: promptTokens, completion_tokens: tokens(text), total_tokens: promptTokens + tokens(text) };
  return { response: style.responseAs === "object" ? body : text, usage };
}

export type TextGenerationOutcome =
  | { kind: "answer"; style?: JudgementStyle }
  | { kind: "raw"; output: unknown }
  | { kind: "throw"; message: string }
  | { kind: "hang" };

export interface TextGenerationCall {
  model: string;
  inputs: TextGenerationInput;
}

/** The stand-in as an AI binding (`run`), with outcomes in call order (the last one repeats). */
export class TextGenerationStandIn {
  readonly calls: TextGenerationCall[] = [];
  constructor(private readonly outcomes: TextGenerationOutcome[] = [{ kind: "answer" }]) {}

  async run(model: string, inputs: object, options?: { signal?: AbortSignal }): Promise<unknown> {
    const typed = inputs as TextGenerationInput;
    this.calls.push({ model, inputs: typed });
    const outcome = this.outcomes[Math.min(this.calls.length - 1, this.outcomes.length - 1)]!;
    switch (outcome.kind) {
      case "answer":
        return answerJudgement(model, typed, outcome.style);
      case "raw":
        return outcome.output;
      case "throw":
        throw new Error(outcome.message);
      case "hang":
        return new Promise((_, reject) => {
          options?.signal?.addEventListener("abort", () => reject(new DOMException("The operation was aborted.", "AbortError")));
        });
    }
  }

  /** As the Worker sees it: `binding<Ai>()` (generic, so the Node suites need no Workers types). */
  binding<T>(): T {
    return { run: (model: string, inputs: object, options?: { signal?: AbortSignal }) => this.run(model, inputs, options) } as T;
  }
}
