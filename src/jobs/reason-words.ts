/**
 * A clip's `reasons` (the engine's signal names, container/src/analyse/) in
 * words a person reads: `loudness_peak` is "a loud moment". The API keeps the
 * stable names; the dashboard shows these.
 */
const REASON_WORDS: Record<string, string> = {
  speech_density: "steady speech",
  vocal_emphasis: "an emphatic voice",
  loudness_peak: "a loud moment",
  crowd_loudness: "a roaring crowd",
  motion_burst: "a burst of motion",
  scene_change: "scene changes",
  replay_cuts: "replay cuts",
  pause_bounded: "starts and ends in a pause",
  prompt_match: "words that match the prompt",
  best_available: "the best span of a video where nothing stood out more",
  complete_thought: "a complete thought",
};

/** One reason in words; a name the engine adds later still reads ("new_signal" -> "new signal"). */
export function reasonInWords(reason: string): string {
  return REASON_WORDS[reason] ?? reason.replace(/_/g, " ");
}

/** "a loud moment, a burst of motion and scene changes" */
export function reasonsInWords(reasons: readonly string[]): string {
  const words = reasons.map(reasonInWords);
  if (words.length <= 1) return words[0] ?? "";
  return `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}
