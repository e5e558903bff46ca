/**
 * Judgement end to end in the engine (docs/judgement.md): a job on real
 * speech (espeak-ng narration with a subtitle track) runs through runJob;
 * the fake Worker answers /judge with the Worker's own judgeCandidates over
 * the text-generation stand-in (shaped as llama-3.3-70b-instruct-fp8-fast
 * documents its input and output; the only fake), which ranks first the
 * candidate that asks how long a clip should be.
 *
 * Checked: the request carries the candidates' words, more of them than the
 * clips asked; the clip the stand-in ranks first comes first, judged by the
 * model, with its title, description, hashtags and sub-scores; its key word
 * is <b> in its WebVTT. And a short source of continuous speech (the
 * podcast case: about 22 s, one clip of 10-17 s asked, no window standing
 * out) gives its best span, judged by the model like any other, instead of
 * failing no_clips_found.
 */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, CompleteReport, JudgeRequest, type StartJob } from "#contract";
import { cachedNarration, type Narration } from "../../../test/media/narration.ts";
import { TextGenerationStandIn } from "../../../test/stand-ins/text-generation.ts";
import { judgeCandidates } from "../../../src/engine/judge.ts";
import { runJob } from "../../src/job/run.ts";
import { anyAddressPolicy } from "../../src/source/address-policy.ts";
import { newJobId, testConfig } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { SCRIPT } from "../helpers/script.ts";
import { startRecordingServer, type RecordingServer } from "../helpers/servers.ts";

const MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";
const runner = nativeRunner();
const tokens = new Map<string, string>();
const ai = new TextGenerationStandIn([{ kind: "answer", style: { favourite: "How long should a clip be" } }]);
let worker: FakeWorker;
let server: RecordingServer;
let talk: Narration;
let short: Narration;
let uploads: string;
let workRoot: string;

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  talk = await cachedNarration({ sentences: SCRIPT, bedDb: 18, subtitleTrack: true, gapSeconds: 0.9 });
  // Continuous, even speech: six statements with hardly a pause, about 22 s; no question, no exclamation. The
  // podcast strategy finds no window of 10-17 s that stands out in it: the short-source case (best_available).
  short = await cachedNarration({ sentences: [SCRIPT[3]!, SCRIPT[6]!, SCRIPT[7]!, SCRIPT[10]!, SCRIPT[11]!, SCRIPT[1]!], subtitleTrack: true, gapSeconds: 0.05 });
  const files: Record<string, string> = { "/talk.mp4": talk.path, "/short.mp4": short.path };
  server = await startRecordingServer((req, res) => {
    const file = files[req.url ?? ""];
    if (!file) return void res.writeHead(404).end();
    void stat(file).then((s) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(s.size) });
      createReadStream(file).pipe(res);
    });
  });
  uploads = await osTempDir("judge-uploads");
  workRoot = await osTempDir("judge-work");
  worker = await startFakeWorker(tokens, uploads);
  worker.behaviour.judge = async ({ body }) => ({ status: 200, body: await judgeCandidates(ai, MODEL, JudgeRequest.parse(body), async () => true) });
}, 180_000);

afterAll(async () => {
  await worker?.close();
  await server?.close();
  await removeTempDirs();
});

async function run(file: string, config: Record<string, unknown>): Promise<{ jobId: string; report: CompleteReport }> {
  const jobId = newJobId("judge");
  const token = `token-${jobId}-abcdefghijkl`;
  tokens.set(jobId, token);
  const job: StartJob = {
    job_id: jobId,
    token,
    video_url: server.url(file),
    video_type: "podcast",
    config: ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, caption_style: "clean", ...config }),
    limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 60 },
  };
  const outcome = await runJob(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
  expect(outcome, JSON.stringify(worker.callsFor(jobId, "fail")[0]?.body)).toBe("completed");
  return { jobId, report: CompleteReport.parse(worker.callsFor(jobId, "complete")[0]?.body) };
}

describe("a job judged by a model", () => {
  let jobId: string;
  let report: CompleteReport;
  beforeAll(async () => {
    ({ jobId, report } = await run("/talk.mp4", { min_clip_seconds: 8, max_clip_seconds: 16, max_clips: 2, captions: "sidecar" }));
  }, 300_000);

  it("sends more candidates than clips asked, with their words", () => {
    const calls = worker.callsFor(jobId, "judge");
    expect(calls).toHaveLength(1);
    const request = JudgeRequest.parse(calls[0]!.body);
    expect(request.candidates.length).toBeGreaterThan(2);
    expect(request.clips_wanted).toBe(2);
    const words = request.candidates.flatMap((c) => c.sentences.map((s) => s.text));
    expect(words).toContain("How long should a clip be on a phone screen?");
    expect(ai.calls.length).toBeGreaterThan(0);
    expect(ai.calls[0]!.inputs.response_format?.type).toBe("json_schema");
  });

  it("ranks first the clip the model ranks first, with its post, sub-scores and key word", async () => {
    expect(report.judgement).toEqual({ judged_by: "model", model: MODEL, fallback_reason: null });
    const first = report.clips[0]!;
    expect(first.judged_by).toBe("model");
    expect(first.scores).toEqual({ hook: 95, payoff: 95, standalone: 95, energy: 95 });
    expect(first.title).toBe("How long should a clip be on a phone screen?");
    expect(first.text).toContain("How long should a clip be");
    expect(first.description).toMatch(/^A moment about/);
    expect(first.hashtags.length).toBeGreaterThan(0);
    expect(first.reasons[0]).toBe("Opens on a question and lands the answer.");
    expect(report.chapters).toEqual([]);
    const vtt = await readFile(path.join(uploads, `${jobId}-0.vtt`), "utf8");
    expect(vtt).toMatch(/<b>[^<]+<\/b>/);
  });
});

describe("a short source of continuous speech", () => {
  it("gives its best span, judged by the model, instead of failing no_clips_found", async () => {
    expect(short.durationSeconds).toBeGreaterThan(10);
    const { jobId, report } = await run("/short.mp4", { min_clip_seconds: 10, max_clip_seconds: Math.min(17, Math.floor(short.durationSeconds)), max_clips: 1, captions: "off" });
    expect(report.clips).toHaveLength(1);
    const clip = report.clips[0]!;
    expect(clip.end_seconds - clip.start_seconds).toBeGreaterThanOrEqual(10 - 0.05);
    expect(clip.end_seconds).toBeLessThanOrEqual(report.source_duration_seconds + 0.05);
    // The best span went to the model with its words, and the model's verdict is the clip's.
    const calls = worker.callsFor(jobId, "judge");
    expect(calls).toHaveLength(1);
    const request = JudgeRequest.parse(calls[0]!.body);
    expect(request.clips_wanted).toBe(1);
    expect(request.candidates.length).toBeGreaterThan(0);
    expect(request.candidates.flatMap((c) => c.sentences.map((s) => s.text)).join(" ")).toContain("That is what our editors");
    expect(report.judgement).toEqual({ judged_by: "model", model: MODEL, fallback_reason: null });
    expect(clip.judged_by).toBe("model");
    expect(clip.scores).not.toBeNull();
    expect(clip.title).not.toBeNull();
    expect(clip.description).not.toBeNull();
    // The signals found nothing that stood out (the best span, said so after the model's reason).
    expect(clip.reasons, JSON.stringify(clip.reasons)).toContain("best_available");
    expect(clip.reasons[0]).not.toBe("best_available");
  }, 300_000);
});
