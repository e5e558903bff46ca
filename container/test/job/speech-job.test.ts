/**
 * The speech layer end to end on real speech: a source whose script was
 * spoken by espeak-ng (two voices, a music bed under them) and embedded as a
 * subtitle track runs through runJob against the fake Worker (which, like a
 * local Worker without an AI binding, answers /transcribe with 503).
 *
 * Checked against the known script: the transcript comes from the subtitle
 * track; no clip edge falls inside a spoken sentence; each clip's text and
 * title are its own words; the WebVTT sidecar's cues say, at their times,
 * what the script says then; and the burned captions, read back from a
 * rendered frame by OCR (tesseract), show the words being said (the
 * word-match rate is printed).
 */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, CompleteReport, Transcript, type StartJob } from "#contract";
import { cachedNarration, type Narration } from "../../../test/media/narration.ts";
import { runJob } from "../../src/job/run.ts";
import { anyAddressPolicy } from "../../src/source/address-policy.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import { parseCaptions } from "../../src/transcript/cues.ts";
import { TRANSCRIBE_CONCURRENCY } from "../../src/transcript/workers-ai.ts";
import { newJobId, testConfig } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { FFMPEG, nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { SCRIPT } from "../helpers/script.ts";
import { startRecordingServer, type RecordingServer } from "../helpers/servers.ts";


const runner = nativeRunner();
const tokens = new Map<string, string>();
let worker: FakeWorker;
let server: RecordingServer;
let narration: Narration;
let uploads: string;
let workRoot: string;

const normalise = (w: string) => w.toLowerCase().replace(/[^a-z0-9']/g, "");

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  narration = await cachedNarration({ sentences: SCRIPT, bedDb: 18, subtitleTrack: true, gapSeconds: 0.9 });
  const size = (await stat(narration.path)).size;
  server = await startRecordingServer((req, res) => {
    if (req.url === "/talk.mp4") {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
      createReadStream(narration.path).pipe(res);
    } else if (req.url === "/latin1.srt") {
      res.writeHead(200, { "content-type": "application/x-subrip" }).end(Buffer.from("1\n00:00:01,000 --> 00:00:02,000\nCaf\xe9\n", "latin1"));
    } else if (req.url === "/late.srt") {
      res.writeHead(200, { "content-type": "application/x-subrip" }).end("1\n10:00:01,000 --> 10:00:02,000\nAfter the end.\n");
    } else res.writeHead(404).end();
  });
  uploads = await osTempDir("speech-uploads");
  workRoot = await osTempDir("speech-work");
  worker = await startFakeWorker(tokens, uploads);
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await server?.close();
  await removeTempDirs();
});

function speechJob(config: Partial<ClipConfig>, extra: Partial<StartJob> = {}): StartJob {
  const jobId = newJobId("speech");
  const token = `token-${jobId}-abcdefghijkl`;
  tokens.set(jobId, token);
  return {
    job_id: jobId,
    token,
    video_url: server.url("/talk.mp4"),
    video_type: "podcast",
    config: ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 8, max_clip_seconds: 20, max_clips: 2, ...config }),
    limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 60 },
    ...extra,
  };
}

async function runSpeechJob(config: Partial<ClipConfig>): Promise<{ jobId: string; report: CompleteReport }> {
  const jobId = newJobId("speech");
  const token = `token-${jobId}-abcdefghijkl`;
  tokens.set(jobId, token);
  const job: StartJob = {
    job_id: jobId,
    token,
    video_url: server.url("/talk.mp4"),
    video_type: "podcast",
    config: ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 8, max_clip_seconds: 20, max_clips: 2, ...config }),
    limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 60 },
  };
  const outcome = await runJob(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
  const fail = worker.callsFor(jobId, "fail")[0];
  expect(outcome, JSON.stringify(fail?.body)).toBe("completed");
  const complete = worker.callsFor(jobId, "complete")[0];
  return { jobId, report: CompleteReport.parse(complete?.body) };
}

/** Script words spoken (at least partly) in [from, to) of source time. */
function spokenWords(from: number, to: number): Set<string> {
  const words = new Set<string>();
  for (const s of narration.sentences) if (s.end > from && s.start < to) for (const w of s.text.split(" ")) words.add(normalise(w));
  return words;
}

async function ocrFrame(clip: string, at: number, dir: string, name: string): Promise<string[]> {
  const png = path.join(dir, `${name}.png`);
  // The caption band, grey and inverted: tesseract reads dark text on light best.
  const frame = await runProcess({
    command: FFMPEG,
    args: ["-nostdin", "-v", "error", "-y", "-ss", at.toFixed(3), "-i", clip, "-frames:v", "1", "-vf", "crop=iw:ih/3:0:ih*2/3,format=gray,negate", png],
    timeoutMs: 30_000,
  });
  expect(frame.exitCode, frame.stderrTail).toBe(0);
  const ocr = await runProcess({ command: "tesseract", args: [png, "stdout", "--psm", "6", "-l", "eng"], timeoutMs: 60_000 });
  expect(ocr.exitCode, ocr.stderrTail).toBe(0);
  return ocr.stdout.split(/\s+/).map(normalise).filter((w) => w !== "");
}

describe("a job with speech and a subtitle track", () => {
  let result: { jobId: string; report: CompleteReport };
  beforeAll(async () => {
    result = await runSpeechJob({ captions: "both", caption_style: "bold", caption_position: "bottom" });
  }, 300_000);

  it("takes the transcript from the subtitle track, after speech-to-text said it is unavailable", async () => {
    const { jobId, report } = result;
    // The first answer (503) ends the stage; the source's second chunk may have gone out before it came back.
    const asked = worker.callsFor(jobId, "transcribe");
    expect(asked.length).toBeGreaterThanOrEqual(1);
    expect(asked.length).toBeLessThanOrEqual(TRANSCRIBE_CONCURRENCY);
    expect(worker.transcribeOpen).toBe(0);
    const wordCount = SCRIPT.join(" ").split(" ").length;
    expect(report.transcript).toEqual({ source: "subtitle_track", language: "en", word_count: wordCount });
    expect(report.transcript_unavailable_reason).toBeNull();
    const uploaded = Transcript.parse(worker.callsFor(jobId, "transcript")[0]?.body);
    expect(uploaded.sentences.map((s) => s.text)).toEqual(SCRIPT);
    // The transcript is uploaded before the job completes.
    const order = worker.callsFor(jobId).map((c) => c.kind);
    expect(order.indexOf("transcript")).toBeLessThan(order.indexOf("complete"));
  });

  it("puts no clip edge inside a spoken sentence, and says why", () => {
    for (const clip of result.report.clips) {
      for (const edge of [clip.start_seconds, clip.end_seconds]) {
        const inside = narration.sentences.find((s) => edge > s.start && edge < s.end);
        expect(inside, `edge ${edge} of clip ${clip.index}`).toBeUndefined();
      }
      expect(clip.end_seconds - clip.start_seconds).toBeGreaterThanOrEqual(8 - 1e-6);
      expect(clip.end_seconds - clip.start_seconds).toBeLessThanOrEqual(20 + 1e-6);
      expect(clip.reasons).toContain("complete_thought");
    }
    // No clip opens on the answer to a question asked just before it: it starts with the question.
    for (const clip of result.report.clips) {
      const first = narration.sentences.find((s) => s.start >= clip.start_seconds);
      const before = narration.sentences.filter((s) => s.end <= clip.start_seconds).pop();
      if (before?.text.endsWith("?") && !first?.text.endsWith("?")) {
        throw new Error(`clip ${clip.index} starts with an answer without its question`);
      }
      if (first?.text.endsWith("?")) expect(clip.reasons[0]).toBe("question_answer");
    }
  });

  it("gives each clip its own words as text and title", () => {
    for (const clip of result.report.clips) {
      const words = spokenWords(clip.start_seconds, clip.end_seconds);
      expect(clip.text).not.toBeNull();
      for (const w of clip.text!.split(" ")) expect(words.has(normalise(w))).toBe(true);
      expect(clip.title).not.toBeNull();
      expect(clip.title!.length).toBeLessThanOrEqual(120);
      for (const w of clip.title!.replace(/…$/, "").split(" ")) expect(words.has(normalise(w)), `title word ${w}`).toBe(true);
      expect(clip.captions_burned).toBe(true);
      expect(clip.sidecars).toBe(true);
      console.log(`clip ${clip.index}: ${clip.start_seconds.toFixed(2)}-${clip.end_seconds.toFixed(2)} s "${clip.title}" [${clip.reasons.join(", ")}]`);
    }
  });

  it("times sidecar cues from the clip start, saying what the script says then", async () => {
    for (const clip of result.report.clips) {
      const vtt = await readFile(path.join(uploads, `${result.jobId}-${clip.index}.vtt`), "utf8");
      const srt = await readFile(path.join(uploads, `${result.jobId}-${clip.index}.srt`), "utf8");
      const cues = parseCaptions(vtt).cues;
      expect(parseCaptions(srt).cues).toEqual(cues);
      expect(cues.length).toBeGreaterThan(1);
      for (const cue of cues) {
        expect(cue.end).toBeLessThanOrEqual(clip.end_seconds - clip.start_seconds + 1e-3);
        const heard = spokenWords(clip.start_seconds + cue.start - 0.05, clip.start_seconds + cue.end + 0.05);
        for (const w of cue.text.split(" ")) expect(heard.has(normalise(w)), `"${w}" at ${cue.start}`).toBe(true);
      }
    }
  });

  it("burns captions that OCR reads back as the words said at that moment", async () => {
    const dir = await osTempDir("ocr");
    let expected = 0;
    let found = 0;
    for (const clip of result.report.clips) {
      const cues = parseCaptions(await readFile(path.join(uploads, `${result.jobId}-${clip.index}.vtt`), "utf8")).cues;
      for (const [i, cue] of cues.slice(0, 4).entries()) {
        const read = new Set(await ocrFrame(path.join(uploads, `${result.jobId}-${clip.index}.mp4`), (cue.start + cue.end) / 2, dir, `c${clip.index}-${i}`));
        for (const w of cue.text.split(" ").map(normalise)) {
          expected += 1;
          if (read.has(w)) found += 1;
        }
      }
    }
    const rate = found / expected;
    console.log(`OCR word-match rate of burned captions: ${(rate * 100).toFixed(1)}% (${found}/${expected} words)`);
    expect(rate).toBeGreaterThanOrEqual(0.8);
  });
});

describe("captions options and failures", () => {
  it("fails the job with captions_invalid for an unusable captions_url, before anything is charged", async () => {
    for (const [route, message] of [
      ["/latin1.srt", /not valid UTF-8/],
      ["/late.srt", /none of the file's cues fall within the video's length/],
    ] as const) {
      const job = speechJob({}, { captions_url: server.url(route) });
      const outcome = await runJob(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
      expect(outcome).toBe("failed");
      const fail = worker.callsFor(job.job_id, "fail")[0]?.body as { code: string; message: string };
      expect(fail.code).toBe("captions_invalid");
      expect(fail.message).toMatch(message);
      // The latin1 file fails before the probe report (no credits reserved); the late one right after probing.
      if (route === "/latin1.srt") expect(worker.callsFor(job.job_id, "probe")).toHaveLength(0);
    }
  }, 120_000);

  it("completes without sidecars when the Worker does not know their route, and burns nothing when asked for sidecars only", async () => {
    const job = speechJob({ captions: "sidecar", max_clips: 1 });
    worker.behaviour.override = ({ kind }) => (kind === "captions_vtt" ? 404 : undefined);
    const outcome = await runJob(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
    worker.behaviour.override = undefined;
    expect(outcome).toBe("completed");
    const report = CompleteReport.parse(worker.callsFor(job.job_id, "complete")[0]?.body);
    expect(report.transcript?.source).toBe("subtitle_track");
    expect(report.clips[0]).toMatchObject({ captions_burned: false, sidecars: false });
    expect(report.clips[0]?.title).not.toBeNull();
  }, 300_000);
});
