/**
 * Published Workers AI prices of the models this service calls, in neurons
 * (Workers AI bills $0.011 per 1,000 neurons above the 10,000 free a day).
 * Read on developers.cloudflare.com/workers-ai/platform/pricing and the
 * models' pages (docs/workers-ai.md says when). A model missing here costs 0
 * neurons in the estimate; a module calling a new model adds its line.
 */
export const USD_PER_NEURON = 0.011 / 1000;

export interface ModelPrice {
  neuronsPerMillionInputTokens?: number;
  neuronsPerMillionOutputTokens?: number;
  neuronsPerAudioMinute?: number;
}

export const MODEL_PRICES: Record<string, ModelPrice> = {
  // $0.0005 per audio minute.
  "@cf/openai/whisper-large-v3-turbo": { neuronsPerAudioMinute: 46.63 },
  // $0.342 per million input and output tokens.
  "@cf/meta/m2m100-1.2b": { neuronsPerMillionInputTokens: 31_050, neuronsPerMillionOutputTokens: 31_050 },
  // $0.012 per million input tokens.
  "@cf/baai/bge-m3": { neuronsPerMillionInputTokens: 1_075 },
  // The default judge (docs/judgement.md): $0.293 per million input tokens, $2.253 per million output tokens.
  "@cf/meta/llama-3.3-70b-instruct-fp8-fast": { neuronsPerMillionInputTokens: 26_636, neuronsPerMillionOutputTokens: 204_818 },
};

export function estimateNeurons(model: string, tokensIn: number, tokensOut: number, audioSeconds: number): number {
  const price = MODEL_PRICES[model];
  if (!price) return 0;
  return (
    ((price.neuronsPerMillionInputTokens ?? 0) * tokensIn) / 1e6 +
    ((price.neuronsPerMillionOutputTokens ?? 0) * tokensOut) / 1e6 +
    ((price.neuronsPerAudioMinute ?? 0) * audioSeconds) / 60
  );
}
