/**
 * The speech benches' source: 6.4 minutes (384 s) of real speech (espeak-ng, two
 * voices taking turns) over a music bed 10 dB below the voice, generated once
 * and cached in .tmp/bench. `bench:speech` runs the speech model over it,
 * `bench:transcribe` the Workers AI stage.
 */
import path from "node:path";
import { PROJECT_ROOT } from "../../scripts/local-stack/paths.ts";
import { cachedSpeechSource, type SpeechSource } from "../../test/media/speech.ts";

const SENTENCES = [
  "Welcome back to the show where we talk about rivers and lakes.",
  "Today my guest has spent twenty years walking along old rivers.",
  { text: "The one thing everybody gets wrong is where a river really starts.", emphasised: true },
  "Most people think of a single spring high up in the mountains.",
  "In fact a river is fed by thousands of small streams and bogs.",
  "The water table rises and falls with every season of the year.",
  "Floods come quickly in the spring when the snow starts to melt.",
  "Farmers have used the water of rivers for thousands of years.",
];

export async function benchSpeechSource(): Promise<SpeechSource> {
  // The eight sentences ten times over.
  const sentences = Array.from({ length: 10 }, () => SENTENCES).flat();
  return cachedSpeechSource({ sentences, bed: { kind: "music", gainDb: 10 }, seed: 5 }, path.join(PROJECT_ROOT, ".tmp", "bench"));
}
