/**
 * What judging costs (docs/judgement.md): a 40-minute conversation (150
 * spoken words a minute, sentences of about 12 words) with the default
 * configuration (5 clips, so 15 candidates of 15-60 s) and chapters, sent
 * through the Worker's own judgeCandidates to the text-generation stand-in,
 * which counts what would be sent. Prints model calls, tokens in and out
 * (the Worker's estimate of input, and the stand-in's count) and the cost
 * per source hour at the model page's prices.
 *
 *   npx tsx bench/judge/cost.ts
 */
import { JUDGE_CANDIDATES_PER_CLIP, type JudgeRequest } from "#contract";
import { judgeCandidates } from "../../src/engine/judge.ts";
import { TextGenerationStandIn } from "../../test/stand-ins/text-generation.ts";
import { sectionsOf, sentencesIn } from "../../container/src/judge/request.ts";

const SOURCE_SECONDS = 40 * 60;
const WORDS_PER_MINUTE = 150;
const WORDS_PER_SENTENCE = 12;
/** @cf/meta/llama-3.3-70b-instruct-fp8-fast, per its model page. */
const USD_PER_M_IN = 0.293;
const USD_PER_M_OUT = 2.253;
const VOCABULARY = "so the thing about building a company is that you never really know which part of the plan will hold and which part will break first when customers arrive".split(" ");

function conversation() {
  const sentenceSeconds = (WORDS_PER_SENTENCE / WORDS_PER_MINUTE) * 60;
  const count = Math.floor(SOURCE_SECONDS / sentenceSeconds);
  const sentences = Array.from({ length: count }, (_, i) => {
    const words = Array.from({ length: WORDS_PER_SENTENCE }, (_, k) => VOCABULARY[(i * 7 + k * 3) % VOCABULARY.length]!);
    const text = `${words.join(" ")}${i % 4 === 0 ? "?" : "."}`;
    return { text: text[0]!.toUpperCase() + text.slice(1), start: i * sentenceSeconds, end: (i + 1) * sentenceSeconds - 0.3 };
  });
  return { source: "workers_ai" as const, language: "en", words: [], sentences };
}

const transcript = conversation();
const clips = 5;
const candidates = Array.from({ length: clips * JUDGE_CANDIDATES_PER_CLIP }, (_, i) => {
  const start = i * (SOURCE_SECONDS / (clips * JUDGE_CANDIDATES_PER_CLIP));
  const end = start + 40;
  return { id: i, start, end, signal_score: 0.5, sentences: sentencesIn(transcript, start, end) };
});
const request: JudgeRequest = {
  language: "en",
  post_language: null,
  video_type: "podcast",
  prompt: null,
  clips_wanted: clips,
  source_duration_seconds: SOURCE_SECONDS,
  candidates,
  sections: sectionsOf(transcript, 0, SOURCE_SECONDS),
};
const ai = new TextGenerationStandIn();
const result = await judgeCandidates(ai, "@cf/meta/llama-3.3-70b-instruct-fp8-fast", request, async () => true);
const counted = ai.calls.length;
const perHour = 3600 / SOURCE_SECONDS;
const usd = (result.usage.tokens_in * USD_PER_M_IN + result.usage.tokens_out * USD_PER_M_OUT) / 1e6;
const maxOut = ai.calls.reduce((sum, c) => sum + (c.inputs.max_tokens ?? 0), 0);
const worst = (result.usage.tokens_in * USD_PER_M_IN + maxOut * USD_PER_M_OUT) / 1e6;
console.log(
  JSON.stringify(
    {
      source_minutes: SOURCE_SECONDS / 60,
      candidates: candidates.length,
      sections: request.sections.length,
      model_calls: counted,
      tokens_in: result.usage.tokens_in,
      tokens_out: result.usage.tokens_out,
      max_tokens_asked: maxOut,
      usd_per_source_hour: Math.round(usd * perHour * 10000) / 10000,
      usd_per_source_hour_if_every_answer_ran_to_max_tokens: Math.round(worst * perHour * 10000) / 10000,
      judged_by: result.judged_by,
    },
    null,
    2,
  ),
);
