/**
 * The one fake of the translation suites: a stand-in for the Workers AI
 * binding (env.AI) answering `@cf/meta/m2m100-1.2b` in the model's
 * documented shape. Input (workers-types Ai_Cf_Meta_M2M100_1_2B_Input):
 * `{text (minLength 1), source_lang (default "en"), target_lang}`; output
 * (Ai_Cf_Meta_M2M100_1_2B_Output): `{translated_text}`. It fails the way the
 * binding does: by throwing ("3040: Capacity temporarily exceeded"), or by
 * not answering until the caller's signal aborts.
 *
 * Its "translation" is a phrase book: sentences it knows come back in the
 * target language; others come back marked `[target] text`, so a test can
 * still tell a translated text from an untranslated one. Plain TypeScript,
 * so the engine's suites (Node) use it too, through the Worker's own
 * translateTexts.
 */

export type M2M100Outcome = { kind: "answer" } | { kind: "raw"; output: unknown } | { kind: "throw"; message: string } | { kind: "hang" };

export interface M2M100Call {
  model: string;
  inputs: Record<string, unknown>;
}

/** English sentence -> its translation, per target language. */
export type PhraseBook = Record<string, Record<string, string>>;

export class M2M100StandIn {
  readonly calls: M2M100Call[] = [];
  /** Outcomes in call order; the last one repeats. */
  constructor(
    private readonly phrases: PhraseBook = {},
    private readonly outcomes: M2M100Outcome[] = [{ kind: "answer" }],
  ) {}

  async run(model: string, inputs: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown> {
    this.calls.push({ model, inputs });
    if (model !== "@cf/meta/m2m100-1.2b") throw new Error(`5007: No such model ${model}`);
    const text = inputs.text;
    const target = inputs.target_lang;
    // The documented schema: text is a required string of at least one character, target_lang required.
    if (typeof text !== "string" || text.length === 0 || typeof target !== "string") {
      throw new Error("5006: Error: required properties at '/' are 'text,target_lang'");
    }
    const outcome = this.outcomes[Math.min(this.calls.length - 1, this.outcomes.length - 1)]!;
    switch (outcome.kind) {
      case "answer":
        return { translated_text: this.phrases[target]?.[text.trim()] ?? `[${target}] ${text}` };
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
    return this as unknown as T;
  }
}
