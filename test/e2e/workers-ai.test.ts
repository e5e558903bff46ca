/**
 * Every stack can reach Workers AI for real: the local stack under
 * `wrangler dev --local` (whose AI binding only throws) with
 * WORKERS_AI_ACCOUNT_ID, WORKERS_AI_TOKEN and WORKERS_AI_BASE_URL pointing at
 * the REST stand-in server (scripts/local-stack/ai-stand-in.ts). A real job
 * on a source without subtitles gets its transcript from speech-to-text over
 * HTTP: the stand-in receives whisper requests carrying the bearer token and
 * base64 WAV audio, and the words it heard are the job's transcript. The
 * same job's clips are judged by the text-generation model over the same
 * REST path: the candidate the stand-in ranks first (the one the signals
 * ranked last, as this test makes it answer) is the first clip, with the
 * stand-in's title and sub-scores.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startAiStandIn, type RunningAiStandIn } from "../../scripts/local-stack/ai-stand-in.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";
import { answerJudgement, readPrompt, type TextGenerationInput, type TextGenerationOutput } from "../stand-ins/text-generation.ts";
import { JUDGE_MODEL, WHISPER } from "../stand-ins/workers-ai-rest.ts";
import { newAccount } from "./harness/accounts.ts";
import { TALK_20S, talkSource } from "./harness/media.ts";
import { stackOptions } from "./harness/shared-stack-config.ts";

const ACCOUNT = "e2e0123456789abcdef0123456789ab";
const TOKEN = "e2e-workers-ai-token";
/** Three sentences, so a short source still has several candidate spans, each with its own words. */
const SCRIPT = "short clips need a clear hook. every clip ends on its answer. viewers stay for the payoff.";
/** Short clips of the 20 s talk (5-10 s), two asked: the engine proposes up to six candidates to judge. */
const JUDGED = { min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 2 } as const;
const TEST_TIMEOUT = { timeout: 300_000 };

let ai: RunningAiStandIn;
let stack: LocalStack;
let sources: SourceServer;
let talkUrl: string;
/** Every answer the judge stand-in gave, in order. */
const judgements: TextGenerationOutput[] = [];
/** The candidate the stand-in ranked first, per model call: its id, the title it gave it, and how many it was sent. */
const picks: { id: number; title: string; sent: number }[] = [];

interface JudgedClip {
  id: number;
  hook: number;
  payoff: number;
  standalone: number;
  energy: number;
  title: string;
}

/**
 * The judge as this test wants it to rank: in each call, the candidate sent
 * last (the engine sends the pool best signal first, so the signals' last)
 * scores 95 on every sub-score in the first call and its own title; every
 * other candidate 10. The answer keeps the documented shape
 * (answerJudgement's), only its numbers and that title are the test's.
 */
function judgeAsTestRanks(input: TextGenerationInput): TextGenerationOutput {
  const answer = answerJudgement(JUDGE_MODEL, input);
  const body = JSON.parse(answer.response as string) as { clips: JudgedClip[]; chapters: unknown[] };
  const user = (input.messages ?? []).filter((m) => m.role === "user").map((m) => m.content).join("\n\n");
  const sent = readPrompt(user).candidates.map((c) => c.id);
  const pick = sent.at(-1)!;
  const first = picks.length === 0;
  for (const clip of body.clips) {
    const top = first && clip.id === pick;
    Object.assign(clip, { hook: top ? 95 : 10, payoff: top ? 95 : 10, standalone: top ? 95 : 10, energy: top ? 95 : 10 });
    if (clip.id === pick) clip.title = `The stand-in's pick, candidate ${pick}`;
  }
  picks.push({ id: pick, title: `The stand-in's pick, candidate ${pick}`, sent: sent.length });
  return { ...answer, response: JSON.stringify(body) };
}

beforeAll(async () => {
  ai = await startAiStandIn({ accountId: ACCOUNT, token: TOKEN, script: SCRIPT });
  ai.standIn.setHandler(JUDGE_MODEL, async (input) => {
    const answer = judgeAsTestRanks(input as TextGenerationInput);
    judgements.push(answer);
    return answer;
  });
  const options = stackOptions("workers-ai", { WORKERS_AI_ACCOUNT_ID: ACCOUNT, WORKERS_AI_TOKEN: TOKEN, WORKERS_AI_BASE_URL: ai.baseUrl });
  const [started, server, talk] = await Promise.all([startLocalStack(options), startSourceServer(), talkSource(TALK_20S)]);
  stack = started;
  sources = server;
  talkUrl = sources.addFile("ai-talk.mp4", talk.path);
}, 240_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), sources?.close(), ai?.close()]);
});

describe("the local stack with Workers AI over REST", TEST_TIMEOUT, () => {
  test("a job's speech goes to whisper over HTTP with the bearer token, and its words are the transcript", async () => {
    const account = await newAccount({ workerUrl: stack.workerUrl, adminToken: stack.adminToken });
    const submitted = await account.client.submit({ video_url: talkUrl, video_type: "podcast" });
    const job = await account.client.waitForJob(submitted.job_id, { timeoutMs: 240_000 });
    expect(job.status, JSON.stringify(job)).toBe("completed");

    const whisper = ai.standIn.requestsFor(WHISPER);
    expect(whisper.length).toBeGreaterThan(0);
    for (const request of whisper) {
      expect(request).toMatchObject({ accountId: ACCOUNT, authorization: `Bearer ${TOKEN}`, status: 200 });
      expect(typeof (request.input as { audio?: unknown }).audio).toBe("string");
    }

    const transcript = await account.client.request("GET", `/api/v1/jobs/${submitted.job_id}/transcript`);
    expect(transcript.status).toBe(200);
    const words = (transcript.body as { words: { text: string }[] }).words.map((w) => w.text.toLowerCase());
    for (const word of SCRIPT.split(" ")) expect(words).toContain(word);
  });

  test("the same REST path judges the clips: the candidate the stand-in ranks first is the first clip, with its title and scores", async () => {
    const account = await newAccount({ workerUrl: stack.workerUrl, adminToken: stack.adminToken });
    const before = judgements.length;
    picks.length = 0;
    expect((await account.client.request("PUT", "/api/v1/configs/judged", { body: JUDGED })).status).toBe(201);
    const submitted = await account.client.submit({ video_url: talkUrl, video_type: "podcast", config_name: "judged" });
    const job = await account.client.waitForJob(submitted.job_id, { timeoutMs: 240_000 });
    expect(job.status, JSON.stringify(job)).toBe("completed");

    const calls = ai.standIn.requestsFor(JUDGE_MODEL);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call).toMatchObject({ accountId: ACCOUNT, authorization: `Bearer ${TOKEN}`, status: 200 });
      expect((call.input as { response_format?: { type?: string } }).response_format?.type).toBe("json_schema");
    }
    expect(judgements.length).toBeGreaterThan(before);
    const top = picks[0]!;
    // A choice to make: the stand-in's pick (the signals' last) is not what the signals alone would put first.
    expect(top.sent).toBeGreaterThan(1);

    const detail = job as unknown as { judgement: { judged_by: string } | null; clips: { title: string; judged_by: string; scores: { hook: number; payoff: number; standalone: number; energy: number } | null }[] };
    expect(detail.judgement?.judged_by).toBe("model");
    const first = detail.clips[0]!;
    expect(first.judged_by).toBe("model");
    expect(first.title).toBe(top.title);
    expect(first.scores).toEqual({ hook: 95, payoff: 95, standalone: 95, energy: 95 });
    // Every other clip the model judged carries the stand-in's low scores.
    for (const clip of detail.clips.slice(1)) if (clip.judged_by === "model") expect(clip.scores).toEqual({ hook: 10, payoff: 10, standalone: 10, energy: 10 });
  });
});
