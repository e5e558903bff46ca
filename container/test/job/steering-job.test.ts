/**
 * Steering on generated speech: espeak-ng sentences on three
 * distinct topics (pricing, hiking, cooking) at known spans, a few filler
 * words ("Um.") between them, and the script as a subtitle track.
 *
 * - Prompt matching, on the real analysis of the source and the transcript
 *   the engine builds from the track: a prompt about one topic yields clips
 *   whose sentences are from that topic (precision and recall per sentence
 *   printed); paraphrased prompts that share no word with the topic match by
 *   meaning through the Worker's embedding module and the bge-m3 stand-in,
 *   and not by words.
 * - One whole job (runJob against the fake Worker) with a prompt, a
 *   time_range, remove_silence tight and remove_fillers: its clips stay in
 *   the range, the rendered audio has no pause over the threshold, the
 *   sentences are all there, the fillers are gone from the audio and the
 *   captions, and each clip is one ffmpeg encode.
 */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, CompleteReport, type StartJob, type Transcript } from "#contract";
import { cachedNarration, type Narration } from "../../../test/media/narration.ts";
import { BgeM3StandIn } from "../../../test/worker/bge-m3-stand-in.ts";
import { analyse } from "../../src/analyse/index.ts";
import type { ScoredWindow } from "../../src/analyse/select.ts";
import { runJob } from "../../src/job/run.ts";
import { probeSource } from "../../src/source/probe.ts";
import { anyAddressPolicy } from "../../src/source/address-policy.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import { promptClips, type PromptOutcome } from "../../src/steer/prompt.ts";
import { SILENCE_MODES } from "../../src/steer/removals.ts";
import { buildTranscript, wordsFromCues } from "../../src/transcript/build.ts";
import { parseCaptions } from "../../src/transcript/cues.ts";
import { newJobId, testConfig } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { FFMPEG, nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { recordingRunner, type RecordingRunner } from "../helpers/recording-runner.ts";
import { startRecordingServer, type RecordingServer } from "../helpers/servers.ts";

type Topic = "pricing" | "hiking" | "cooking" | "filler";
const BLOCKS: [Topic, string[]][] = [
  ["pricing", ["Our pricing starts at ten dollars a month.", "The basic plan includes five projects.", "Teams can choose the yearly subscription instead.", "Every invoice lists the discount you received."]],
  ["hiking", ["Last weekend we hiked the northern ridge trail.", "The mountain path was steep and rocky.", "Good boots matter more than anything else.", "We watched the sunrise from the summit."]],
  ["cooking", ["Tonight I am cooking a simple pasta recipe.", "Um.", "First we slice garlic and warm the olive oil.", "The sauce should simmer for twenty minutes."]],
  ["pricing", ["Now back to the subscription plans and billing.", "Um.", "The premium tier adds priority support.", "Prices for schools have a special discount."]],
  ["hiking", ["Before any hike, check the weather and the map.", "Pack water, a warm layer and a compass.", "The forest trail loops back to the lake."]],
  ["cooking", ["For dessert we bake bread with butter and salt.", "Um.", "The oven should be very hot before baking.", "Taste the dish and add pepper at the end."]],
];
const SCRIPT = BLOCKS.flatMap(([, sentences]) => sentences);
const TOPIC_OF = BLOCKS.flatMap(([topic, sentences]) => sentences.map((s) => (s === "Um." ? ("filler" as Topic) : topic)));

const runner = nativeRunner();
let narration: Narration;

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  narration = await cachedNarration({ sentences: SCRIPT, subtitleTrack: true, gapSeconds: 0.8 });
}, 180_000);

afterAll(async () => {
  await removeTempDirs();
});

/** The transcript the engine builds from the subtitle track (same cues, same builder). */
function trackTranscript(): Transcript {
  const srt = narration.sentences.map((s, i) => `${i + 1}\n${stamp(s.start)} --> ${stamp(s.end)}\n${s.text}`).join("\n\n");
  return buildTranscript("subtitle_track", "en", wordsFromCues(parseCaptions(srt).cues, narration.durationSeconds));
}

function stamp(t: number): string {
  const ms = Math.round(t * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)},${p(ms % 1000, 3)}`;
}

/** Per-sentence precision and recall of clips against one topic (fillers are not counted). */
function precisionRecall(clips: { start: number; end: number }[], topic: Topic) {
  const inClip = narration.sentences.map((s) => clips.some((c) => (s.start + s.end) / 2 >= c.start && (s.start + s.end) / 2 < c.end));
  const counted = narration.sentences.map((_, i) => TOPIC_OF[i] !== "filler");
  let hit = 0;
  let chosen = 0;
  let relevant = 0;
  narration.sentences.forEach((_, i) => {
    if (!counted[i]) return;
    if (inClip[i]) chosen++;
    if (TOPIC_OF[i] === topic) relevant++;
    if (inClip[i] && TOPIC_OF[i] === topic) hit++;
  });
  return { precision: chosen === 0 ? 0 : hit / chosen, recall: hit / relevant };
}

describe("prompt matching on three topics", () => {
  const config = ClipConfig.parse({ min_clip_seconds: 8, max_clip_seconds: 30, max_clips: 3, prompt: "x" });
  let windows: ScoredWindow[] = [];
  let transcript: Transcript;
  const figures: string[] = [];

  beforeAll(async () => {
    const source = await probeSource({ runner, path: narration.path, sizeBytes: (await stat(narration.path)).size, videoUrl: "https://example.com/talk.mp4", platformTitle: null, maxSourceSeconds: 3600, signal: new AbortController().signal });
    await analyse(runner, source, "podcast", config, { signal: new AbortController().signal, onProgress: () => undefined, speech: null, onWindows: (w) => (windows = w) });
    transcript = trackTranscript();
  }, 180_000);

  afterAll(() => {
    console.log(`steering: per-sentence precision/recall (${narration.sentences.length - 3} sentences, 3 topics)\n${figures.join("\n")}`);
  });

  async function run(prompt: string, reporter: Parameters<typeof promptClips>[0]["reporter"]): Promise<PromptOutcome> {
    return promptClips(
      { prompt, transcript, limits: { min: 8, max: 30, from: 0, to: narration.durationSeconds }, maxClips: 3, windows, reporter, jobId: "job_test" },
      () => undefined,
    );
  }
  const byWords = { similarity: async () => ({ kind: "unavailable" as const }) };
  // What the Worker's /similarity route answers (src/engine/embeddings.ts, tested with the same stand-in in the worker suite).
  const standIn = new BgeM3StandIn();
  const byMeaning = {
    similarity: async (body: { query: string; texts: string[] }) => {
      const output = (await standIn.run("@cf/baai/bge-m3", { text: [body.query, ...body.texts] })) as { data: number[][] };
      const [query, ...texts] = output.data;
      const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
      return { kind: "ok" as const, result: { model: "@cf/baai/bge-m3", similarities: texts.map((t) => dot(query!, t)) } };
    },
  };

  const cases: [string, Topic, "words" | "meaning"][] = [
    ["the parts about pricing and subscription plans", "pricing", "words"],
    ["hiking trails in the mountains", "hiking", "words"],
    ["cooking recipes", "cooking", "words"],
    ["how much does it cost", "pricing", "meaning"],
    ["being outdoors in nature", "hiking", "meaning"],
    ["what to eat for dinner", "cooking", "meaning"],
  ];
  for (const [prompt, topic, method] of cases) {
    it(`"${prompt}" (${method}) yields ${topic} sentences`, async () => {
      const outcome = await run(prompt, method === "words" ? byWords : byMeaning);
      expect(outcome.method).toBe(method);
      const clips = outcome.candidates;
      const { precision, recall } = precisionRecall(clips, topic);
      figures.push(`  ${method.padEnd(7)} ${topic.padEnd(8)} precision ${precision.toFixed(2)} recall ${recall.toFixed(2)}  "${prompt}"`);
      expect(precision).toBeGreaterThanOrEqual(0.85);
      // By words, a topic's sentences that name none of the prompt's words are found only between ones that do.
      expect(recall).toBeGreaterThanOrEqual(method === "words" ? 0.5 : 0.85);
      for (const [i, clip] of clips.entries()) {
        expect(clip.reasons[0]).toBe("prompt_match");
        expect(outcome.matches[i]).toBeGreaterThanOrEqual(0.3);
        expect(clip.end - clip.start).toBeGreaterThanOrEqual(8 - 1e-6);
        expect(clip.end - clip.start).toBeLessThanOrEqual(30 + 1e-6);
      }
    });
  }

  it("a paraphrase that shares no word with the topic does not match by words", async () => {
    await expect(run("how much does it cost", byWords)).rejects.toThrow(/Nothing said in the video matches the prompt "how much does it cost" in its words/);
  });

  it("a prompt about nothing in the video fails no_clips_found saying so, by meaning too", async () => {
    await expect(run("quantum chemistry lectures", byWords)).rejects.toThrow(/matches the prompt/);
    await expect(run("quantum chemistry lectures", byMeaning)).rejects.toThrow(/Nothing said in the video matches the prompt "quantum chemistry lectures" in meaning/);
  });
});

describe("a steered job: prompt, time_range, tight silence and fillers removed", () => {
  const tokens = new Map<string, string>();
  let worker: FakeWorker;
  let server: RecordingServer;
  let recorder: RecordingRunner;
  let report: CompleteReport;
  let jobId: string;
  let range: { start_seconds: number; end_seconds: number };
  let uploads: string;

  beforeAll(async () => {
    const size = (await stat(narration.path)).size;
    server = await startRecordingServer((req, res) => {
      if (req.url === "/talk.mp4") {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
        createReadStream(narration.path).pipe(res);
      } else res.writeHead(404).end();
    });
    uploads = await osTempDir("steering-uploads");
    worker = await startFakeWorker(tokens, uploads);
    // From the second block to the end: the first pricing block is outside the range.
    const secondBlock = narration.sentences[4]!;
    range = { start_seconds: Math.floor(secondBlock.start), end_seconds: Math.ceil(narration.durationSeconds) + 5 };
    jobId = newJobId("steer");
    const token = `token-${jobId}-abcdefghijkl`;
    tokens.set(jobId, token);
    const job: StartJob = {
      job_id: jobId,
      token,
      video_url: server.url("/talk.mp4"),
      video_type: "podcast",
      config: ClipConfig.parse({
        aspect_ratio: "1:1",
        resolution: 720,
        min_clip_seconds: 8,
        max_clip_seconds: 30,
        max_clips: 2,
        captions: "sidecar",
        prompt: "subscription plans, pricing and billing",
        remove_silence: "tight",
        remove_fillers: true,
      }),
      limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 60 },
      time_range: range,
    };
    recorder = recordingRunner();
    const outcome = await runJob(job, { runner: recorder, config: testConfig(await osTempDir("steering-work"), { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
    expect(outcome, JSON.stringify(worker.callsFor(jobId, "fail")[0]?.body)).toBe("completed");
    report = CompleteReport.parse(worker.callsFor(jobId, "complete")[0]?.body);
  }, 400_000);

  afterAll(async () => {
    await worker?.close();
    await server?.close();
  });

  it("clips only the second pricing block, inside the range, with its prompt match", () => {
    expect(report.clips.length).toBe(1);
    const clip = report.clips[0]!;
    expect(clip.start_seconds).toBeGreaterThanOrEqual(range.start_seconds);
    const pricing = narration.sentences.filter((_, i) => TOPIC_OF[i] === "pricing" && narration.sentences[i]!.start >= range.start_seconds);
    for (const s of pricing) expect((s.start + s.end) / 2).toBeGreaterThan(clip.start_seconds), expect((s.start + s.end) / 2).toBeLessThan(clip.end_seconds);
    expect(clip.prompt_match).toBeGreaterThanOrEqual(0.3);
    expect(clip.reasons[0]).toBe("prompt_match");
  });

  it("cuts pauses and the filler in the clip's one encode; the audio has no pause over the threshold and every sentence", async () => {
    const clip = report.clips[0]!;
    const file = worker.callsFor(jobId, "clip").find((c) => c.index === 0)!.file!;
    // One ffmpeg run wrote the clip (the thumbnail is its own short run).
    expect(recorder.renders().filter((r) => r.index === 0).length).toBe(1);
    const kinds = new Set(clip.removed.map((r) => r.kind));
    expect(kinds).toEqual(new Set(["silence", "filler"]));
    const removedSeconds = clip.removed.reduce((s, r) => s + r.end_seconds - r.start_seconds, 0);
    expect(clip.duration_seconds).toBeCloseTo(clip.end_seconds - clip.start_seconds - removedSeconds, 2);
    // The real length of the rendered file.
    const probed = await runProcess({ command: "ffprobe", args: ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file], timeoutMs: 30_000 });
    expect(Number(probed.stdout.trim())).toBeCloseTo(clip.duration_seconds!, 1);
    // No silence longer than tight's threshold inside the clip's audio.
    const threshold = SILENCE_MODES.tight.over;
    const detect = await runProcess({ command: FFMPEG, args: ["-nostdin", "-i", file, "-vn", "-af", `silencedetect=noise=-35dB:d=${threshold}`, "-f", "null", "-"], timeoutMs: 60_000, stderrTailChars: 1 << 20 });
    const silences = [...detect.stderrTail.matchAll(/silence_duration: ([\d.]+)/g)].map((m) => Number(m[1]));
    expect(silences, "pauses over the threshold in the output").toEqual([]);
    // Every sentence inside the clip is still heard in full: the voiced time is the sentences' time, the fillers' is gone.
    const inClip = narration.sentences.filter((s) => s.start >= clip.start_seconds && s.end <= clip.end_seconds);
    const sentences = inClip.filter((s) => s.text !== "Um.").reduce((sum, s) => sum + (s.end - s.start), 0);
    const fillers = inClip.filter((s) => s.text === "Um.").reduce((sum, s) => sum + (s.end - s.start), 0);
    expect(fillers).toBeGreaterThan(0.15);
    const short = await runProcess({ command: FFMPEG, args: ["-nostdin", "-i", file, "-vn", "-af", "silencedetect=noise=-35dB:d=0.05", "-f", "null", "-"], timeoutMs: 60_000, stderrTailChars: 1 << 20 });
    const quiet = [...short.stderrTail.matchAll(/silence_duration: ([\d.]+)/g)].reduce((s, m) => s + Number(m[1]), 0);
    const voiced = clip.duration_seconds! - quiet;
    // Quiet onsets and releases under -35 dB read as silence: allow 0.15 s per sentence, far less than any cut word.
    expect(voiced).toBeGreaterThan(sentences - 0.15 * inClip.length);
    expect(voiced).toBeLessThan(sentences + fillers - 0.1);
  });

  it("re-times the captions to the cut clip, without the filler", async () => {
    const vtt = await readFile(worker.callsFor(jobId, "captions_vtt").find((c) => c.index === 0)!.file!, "utf8");
    expect(vtt).not.toMatch(/\bum\b/i);
    const clip = report.clips[0]!;
    const cues = parseCaptions(vtt).cues;
    expect(cues.at(-1)!.end).toBeLessThanOrEqual(clip.duration_seconds! + 0.01);
    expect(clip.text ?? "").not.toMatch(/\bum\b/i);
  });
});
