/**
 * A stand-in for the Workers AI binding (env.AI) answering
 * `@cf/baai/bge-m3` the way its documentation says (workers-types
 * Ai_Cf_Baai_Bge_M3_Input_Embedding / _Output_Embedding): input
 * `{text: string | string[], truncate_inputs?}`, output
 * `{shape: [n, 1024], data: number[][], pooling: "cls"}`, one unit vector
 * per text. It fails the way the binding does: by throwing.
 *
 * What it cannot do is understand language, so it reads words through a
 * small concept lexicon: every word belongs to a concept ("money": price,
 * cost, pay, cheap, budget...), a concept is a fixed direction in 1024
 * dimensions, and a text's vector is the normalised sum of its words'
 * concepts plus a small word-specific part. Paraphrases that share no word
 * but share concepts ("how much does it cost" and "our pricing plans")
 * therefore land close together, as they do with the real model; unrelated
 * topics land far apart. Shared by the Worker suites and the engine's.
 */

export const BGE_M3_DIMENSIONS = 1024;

const CONCEPTS: Record<string, string[]> = {
  money: ["price", "prices", "pricing", "priced", "cost", "costs", "costly", "pay", "paying", "paid", "cheap", "cheaper", "expensive", "budget", "dollar", "dollars", "fee", "fees", "plan", "plans", "subscription", "subscriptions", "discount", "discounts", "invoice", "invoices", "billing", "billed", "money", "afford", "tier", "tiers", "charge", "charged", "euros", "month", "monthly", "annual", "yearly", "refund", "spend", "much"],
  outdoors: ["hike", "hikes", "hiking", "hiked", "trail", "trails", "mountain", "mountains", "summit", "boots", "camping", "camp", "tent", "forest", "ridge", "valley", "walk", "walking", "outdoors", "outside", "nature", "backpack", "climb", "climbing", "peak", "river", "lake", "map", "compass", "weather", "sunrise"],
  food: ["cook", "cooking", "cooked", "recipe", "recipes", "oven", "garlic", "pasta", "sauce", "bake", "baking", "kitchen", "dinner", "lunch", "meal", "meals", "onion", "onions", "salt", "pepper", "simmer", "boil", "fry", "frying", "taste", "flavor", "flavour", "dish", "dishes", "butter", "bread", "eat", "eating", "food", "chef", "spices"],
};
const CONCEPT_OF = new Map<string, string>();
for (const [concept, words] of Object.entries(CONCEPTS)) for (const word of words) CONCEPT_OF.set(word, concept);

/** A deterministic pseudo-random unit-ish direction for a key (FNV-1a seeded xorshift). */
function direction(key: string): Float64Array {
  let seed = 2166136261;
  for (let i = 0; i < key.length; i++) seed = Math.imul(seed ^ key.charCodeAt(i), 16777619) >>> 0;
  const v = new Float64Array(BGE_M3_DIMENSIONS);
  for (let i = 0; i < v.length; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    seed >>>= 0;
    v[i] = seed / 4294967296 - 0.5;
  }
  return v;
}

export function embed(text: string): number[] {
  const sum = new Float64Array(BGE_M3_DIMENSIONS);
  // Every text shares a common part, as real sentence embeddings do (their cosines are rarely near 0).
  const common = direction("::common");
  for (let i = 0; i < sum.length; i++) sum[i] = common[i]!;
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const concept = CONCEPT_OF.get(word);
    const part = direction(concept ? `concept:${concept}` : `word:${word}`);
    const weight = concept ? 1 : 0.8;
    for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + weight * part[i]!;
  }
  const norm = Math.sqrt(sum.reduce((s, x) => s + x * x, 0)) || 1;
  return Array.from(sum, (x) => x / norm);
}

export type EmbeddingOutcome = { kind: "answer" } | { kind: "throw"; message: string } | { kind: "raw"; output: unknown };

export interface EmbeddingCall {
  model: string;
  inputs: Record<string, unknown>;
}

export class BgeM3StandIn {
  readonly calls: EmbeddingCall[] = [];
  /** Outcomes in call order; the last one repeats. */
  constructor(private readonly outcomes: EmbeddingOutcome[] = [{ kind: "answer" }]) {}

  async run(model: string, inputs: Record<string, unknown>): Promise<unknown> {
    this.calls.push({ model, inputs });
    if (model !== "@cf/baai/bge-m3") throw new Error(`5007: No such model ${model}`);
    const outcome = this.outcomes[Math.min(this.calls.length - 1, this.outcomes.length - 1)]!;
    if (outcome.kind === "throw") throw new Error(outcome.message);
    if (outcome.kind === "raw") return outcome.output;
    const texts = typeof inputs.text === "string" ? [inputs.text] : Array.isArray(inputs.text) ? (inputs.text as unknown[]) : null;
    if (!texts || texts.some((t) => typeof t !== "string" || t.length === 0)) throw new Error("5006: Invalid input: text must be a non-empty string or array of strings");
    const data = (texts as string[]).map(embed);
    return { shape: [data.length, BGE_M3_DIMENSIONS], data, pooling: "cls" };
  }
}
