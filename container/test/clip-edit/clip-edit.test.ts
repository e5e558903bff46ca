/**
 * A clip edit on the engine: a narrated source (espeak-ng, known sentence
 * times) and a ClipEdit over a span of it with one word corrected, run
 * against the fake Worker. The clip lasts the span (ffprobe, within a
 * frame); the WebVTT sidecar has the corrected word in the cue of its time;
 * the burned captions show it at that moment (tesseract); exactly one clip is
 * reported, at the edit's index, with nothing heard or judged by the engine.
 * A span outside the source fails with time_range_outside_source; the
 * engine's server runs an edit beside its job's id, once per edit id, and a
 * cancel of the job id stops it.
 */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, CompleteReport, type ClipEdit, type EditWord, type StartJob } from "#contract";
import { cachedNarration, type Narration } from "../../../test/media/narration.ts";
import { runClipEdit, type ClipEditJob } from "../../src/clip-edit/run.ts";
import { anyAddressPolicy } from "../../src/source/address-policy.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import { parseCaptions } from "../../src/transcript/cues.ts";
import { newJobId, postJson, startTestEngine, testConfig, type TestEngine } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { FFMPEG, FFPROBE, nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { SCRIPT } from "../helpers/script.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

const runner = nativeRunner();
const tokens = new Map<string, string>();
const CORRECTED = "Pelican";
let worker: FakeWorker;
let server: RecordingServer;
let narration: Narration;
let uploads: string;
let workRoot: string;
/** Requests for /held.mp4 wait here until the test ends (an edit stuck in its download). */
const held: (() => void)[] = [];

const normalise = (w: string) => w.toLowerCase().replace(/[^a-z0-9']/g, "");

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  narration = await cachedNarration({ sentences: SCRIPT.slice(0, 4), gapSeconds: 0.9 });
  const size = (await stat(narration.path)).size;
  server = await startRecordingServer((req, res) => {
    if (req.url === "/talk.mp4") {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
      createReadStream(narration.path).pipe(res);
    } else if (req.url === "/held.mp4") {
      held.push(() => res.destroy());
    } else res.writeHead(404).end();
  });
  uploads = await osTempDir("edit-uploads");
  workRoot = await osTempDir("edit-work");
  worker = await startFakeWorker(tokens, uploads);
}, 120_000);

afterAll(async () => {
  for (const release of held.splice(0)) release();
  await worker?.close();
  await server?.close();
  await removeTempDirs();
});

/** The script's words with times spread over each sentence by their length (the Worker sends the transcript's times). */
function scriptWords(): EditWord[] {
  return narration.sentences.flatMap((s) => {
    const texts = s.text.split(" ");
    const chars = texts.reduce((n, t) => n + t.length + 1, 0);
    let at = s.start;
    return texts.map((text) => {
      const length = ((s.end - s.start) * (text.length + 1)) / chars;
      const word = { text, start: Number(at.toFixed(3)), end: Number((at + length).toFixed(3)) };
      at += length;
      return word;
    });
  });
}

function editJob(edit: Omit<ClipEdit, "edit_id" | "version">, videoPath = "/talk.mp4"): ClipEditJob {
  const jobId = newJobId("edit");
  const token = `token-${jobId}-abcdefghijkl`;
  tokens.set(jobId, token);
  return {
    job_id: jobId,
    token,
    video_url: server.url(videoPath),
    video_type: "podcast",
    config: ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, captions: "both", caption_style: "bold", caption_position: "bottom", reframe: "center", hook_title_seconds: 0 }),
    limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 60 },
    clip_edit: { edit_id: `edit_${jobId.slice(4, 24)}`, version: 2, ...edit },
  };
}

async function videoStream(file: string): Promise<{ duration: number; frame: number }> {
  const probe = await runProcess({
    command: FFPROBE,
    args: ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=duration,r_frame_rate", "-of", "json", file],
    timeoutMs: 30_000,
  });
  expect(probe.exitCode, probe.stderrTail).toBe(0);
  const stream = (JSON.parse(probe.stdout) as { streams: { duration: string; r_frame_rate: string }[] }).streams[0]!;
  const [num, den] = stream.r_frame_rate.split("/").map(Number);
  return { duration: Number(stream.duration), frame: den! / num! };
}

async function ocrCaptionBand(clip: string, at: number, dir: string): Promise<string[]> {
  const png = path.join(dir, "band.png");
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

describe("a clip edit with a new span and a corrected word", () => {
  let job: ClipEditJob;
  let report: CompleteReport;
  let corrected: EditWord;
  const INDEX = 3;

  beforeAll(async () => {
    const [first, second] = narration.sentences;
    const start = Number((first!.end - 0.4).toFixed(3));
    const end = Number((second!.end + 0.5).toFixed(3));
    const words = scriptWords().filter((w) => (w.start + w.end) / 2 >= start && (w.start + w.end) / 2 < end);
    // "clip" in the second sentence becomes the correction.
    const at = words.findIndex((w) => w.text === "clip");
    expect(at).toBeGreaterThan(0);
    words[at] = { ...words[at]!, text: CORRECTED };
    corrected = words[at]!;
    job = editJob({ index: INDEX, start_seconds: start, end_seconds: end, words, title: null });
    const outcome = await runClipEdit(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
    expect(outcome, JSON.stringify(worker.callsFor(job.job_id, "fail")[0]?.body)).toBe("completed");
    report = CompleteReport.parse(worker.callsFor(job.job_id, "complete")[0]?.body);
  }, 300_000);

  it("reports exactly one clip, at the edit's index, with nothing heard or judged", () => {
    expect(report.clips).toHaveLength(1);
    const clip = report.clips[0]!;
    expect(clip).toMatchObject({ index: INDEX, start_seconds: job.clip_edit.start_seconds, end_seconds: job.clip_edit.end_seconds, judged_by: "signals", captions_burned: true, sidecars: true, reframe: "center" });
    expect(clip.framing?.path.length).toBeGreaterThan(0);
    expect(clip.text).toContain(CORRECTED);
    // No title was given: one is chosen from the clip's words, the correction among them.
    expect(clip.title).not.toBeNull();
    expect(report.transcript).toBeNull();
    const kinds = worker.callsFor(job.job_id).map((c) => c.kind);
    for (const kind of ["transcribe", "judge", "probe", "transcript"]) expect(kinds).not.toContain(kind);
    const uploaded = worker.callsFor(job.job_id).filter((c) => c.index !== undefined);
    expect(new Set(uploaded.map((c) => c.index))).toEqual(new Set([INDEX]));
    expect(uploaded.map((c) => c.kind).sort()).toEqual(["captions_srt", "captions_vtt", "clip", "thumbnail"]);
    expect(kinds.at(-1)).toBe("complete");
  });

  it("lasts the span, within a frame", async () => {
    const { duration, frame } = await videoStream(path.join(uploads, `${job.job_id}-${INDEX}.mp4`));
    const span = job.clip_edit.end_seconds - job.clip_edit.start_seconds;
    console.log(`edited clip: span ${span.toFixed(3)} s, video ${duration.toFixed(3)} s, frame ${frame.toFixed(4)} s`);
    expect(Math.abs(duration - span)).toBeLessThanOrEqual(frame + 1e-3);
  });

  it("carries the corrected word in the sidecar cue of its time", async () => {
    const vtt = await readFile(path.join(uploads, `${job.job_id}-${INDEX}.vtt`), "utf8");
    const srt = await readFile(path.join(uploads, `${job.job_id}-${INDEX}.srt`), "utf8");
    const cues = parseCaptions(vtt).cues;
    expect(parseCaptions(srt).cues).toEqual(cues);
    const inClip = (corrected.start + corrected.end) / 2 - job.clip_edit.start_seconds;
    const cue = cues.find((c) => c.start <= inClip && inClip < c.end);
    expect(cue?.text.split(/\s+/)).toContain(CORRECTED);
    expect(vtt).not.toMatch(/\bclip\b/);
  });

  it("burns the corrected word into the picture while it is said", async () => {
    const dir = await osTempDir("edit-ocr");
    const inClip = (corrected.start + corrected.end) / 2 - job.clip_edit.start_seconds;
    const read = await ocrCaptionBand(path.join(uploads, `${job.job_id}-${INDEX}.mp4`), inClip, dir);
    console.log(`OCR at ${inClip.toFixed(2)} s: ${read.join(" ")}`);
    expect(read).toContain(normalise(CORRECTED));
  });
});

/** An edit whose span runs past the job's transcript: the first sentence's words are sent, the second is to be heard. */
function partlyTranscribedEdit(): { job: ClipEditJob; heardFrom: number } {
  const [first, second] = narration.sentences;
  const start = Number(Math.max(0, first!.start - 0.3).toFixed(3));
  const end = Number((second!.end + 0.5).toFixed(3));
  const heardFrom = Number((second!.start - 0.3).toFixed(3));
  const words = scriptWords().filter((w) => w.start >= start && w.start < heardFrom);
  const job = editJob({ index: 4, start_seconds: start, end_seconds: end, words, transcribe: [{ start: heardFrom, end }], title: "Heard" });
  return { job, heardFrom };
}

describe("an edit whose span reaches past the job's transcript", () => {
  it("hears the uncovered part and captions it in the sidecars and the picture", async () => {
    const { job, heardFrom } = partlyTranscribedEdit();
    const truth = scriptWords();
    const asked: number[] = [];
    worker.behaviour.transcribe = ({ jobId, startSeconds, wav }) => {
      if (jobId !== job.job_id) return { status: 503, body: { code: "transcription_unavailable" } };
      asked.push(startSeconds);
      const seconds = (wav.length - 44) / 32_000;
      // Like the model: every word it hears in the chunk.
      return { status: 200, body: { language: "en", words: truth.filter((w) => w.end > startSeconds && w.start < startSeconds + seconds) } };
    };
    try {
      const outcome = await runClipEdit(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
      expect(outcome, JSON.stringify(worker.callsFor(job.job_id, "fail")[0]?.body)).toBe("completed");
    } finally {
      worker.behaviour.transcribe = undefined;
    }
    // Only the uncovered part was sent (its chunk starts a little before it, as a job's do).
    expect(asked.length).toBeGreaterThan(0);
    for (const at of asked) expect(at).toBeGreaterThanOrEqual(heardFrom - 0.5);
    const report = CompleteReport.parse(worker.callsFor(job.job_id, "complete")[0]?.body);
    const clip = report.clips[0]!;
    expect(clip.text).toContain("respects");
    expect(clip.text).toContain("Why");
    expect(report.transcript_unavailable_reason).not.toMatch(/outside the job's transcript/);

    const vtt = await readFile(path.join(uploads, `${job.job_id}-4.vtt`), "utf8");
    const cues = parseCaptions(vtt).cues;
    const heardWord = truth.find((w) => w.text === "respects")!;
    const inClip = (heardWord.start + heardWord.end) / 2 - job.clip_edit.start_seconds;
    expect(cues.find((c) => c.start <= inClip && inClip < c.end)?.text.split(/\s+/)).toContain("respects");
    // Each word once: the sent ones are not heard again.
    expect(cues.map((c) => c.text).join(" ").match(/\bWhy\b/g)).toHaveLength(1);

    const dir = await osTempDir("edit-heard-ocr");
    const read = await ocrCaptionBand(path.join(uploads, `${job.job_id}-4.mp4`), inClip, dir);
    console.log(`OCR at ${inClip.toFixed(2)} s: ${read.join(" ")}`);
    expect(read).toContain("respects");
  }, 300_000);

  it("completes with the sent words only, and says why, when speech-to-text fails", async () => {
    const { job, heardFrom } = partlyTranscribedEdit();
    worker.behaviour.transcribe = () => ({ status: 502, body: { type: "about:blank", title: "Speech-to-text failed", status: 502, code: "transcription_failed" } });
    try {
      const outcome = await runClipEdit(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
      expect(outcome, JSON.stringify(worker.callsFor(job.job_id, "fail")[0]?.body)).toBe("completed");
    } finally {
      worker.behaviour.transcribe = undefined;
    }
    expect(worker.callsFor(job.job_id, "transcribe").length).toBeGreaterThan(0);
    const report = CompleteReport.parse(worker.callsFor(job.job_id, "complete")[0]?.body);
    expect(report.transcript_unavailable_reason).toMatch(/outside the job's transcript/);
    expect(report.clips[0]!.text).not.toContain("respects");
    const cues = parseCaptions(await readFile(path.join(uploads, `${job.job_id}-4.vtt`), "utf8")).cues;
    expect(cues.length).toBeGreaterThan(0);
    for (const cue of cues) expect(cue.start + job.clip_edit.start_seconds).toBeLessThan(heardFrom + 0.5);
  }, 300_000);
});

describe("an edit that cannot be rendered", () => {
  it("fails a span outside the source with time_range_outside_source, uploading nothing", async () => {
    const job = editJob({ index: 0, start_seconds: 5, end_seconds: 500, words: [], title: "Past the end" });
    const outcome = await runClipEdit(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
    expect(outcome).toBe("failed");
    const fail = worker.callsFor(job.job_id, "fail")[0]?.body as { code: string; message: string };
    expect(fail.code).toBe("time_range_outside_source");
    expect(fail.message).toMatch(/not inside the source/);
    expect(worker.callsFor(job.job_id).map((c) => c.kind)).toEqual(["fail"]);
  }, 120_000);

  it("fails an end before the start before downloading anything", async () => {
    const before = server.requests.length;
    const job = editJob({ index: 0, start_seconds: 8, end_seconds: 4, words: [], title: null });
    const outcome = await runClipEdit(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
    expect(outcome).toBe("failed");
    expect((worker.callsFor(job.job_id, "fail")[0]?.body as { code: string }).code).toBe("time_range_outside_source");
    expect(server.requests.length).toBe(before);
  });
});

describe("the engine's server and edits", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine(await osTempDir("edit-engine"), { policy: anyAddressPolicy }, { callbackBase: worker.base });
  });
  afterAll(async () => {
    for (const release of held.splice(0)) release();
    await engine?.close();
  });

  it("runs an edit once per edit id beside its job's id, and a cancel of the job id stops it", async () => {
    const edit = editJob({ index: 1, start_seconds: 1, end_seconds: 4, words: [], title: null }, "/held.mp4");
    const start = (body: StartJob) => postJson(`${engine.base}/jobs`, body);
    expect((await start(edit)).json).toEqual({ job_id: edit.job_id, started: true });
    // The same edit again is not started twice; another edit of the same job is its own run.
    expect((await start(edit)).json).toEqual({ job_id: edit.job_id, started: false });
    const other: ClipEditJob = { ...edit, clip_edit: { ...edit.clip_edit, edit_id: `${edit.clip_edit.edit_id}B` } };
    expect((await start(other)).json).toEqual({ job_id: edit.job_id, started: true });
    expect(engine.engine.activeJobs()).toBe(2);
    await waitFor(() => server.requests.filter((r) => r === "GET /held.mp4").length >= 2, 20_000, "both edits downloading");
    const cancel = await postJson(`${engine.base}/jobs/${edit.job_id}/cancel`, {});
    expect(cancel.status).toBe(202);
    await waitFor(() => engine.engine.activeJobs() === 0, 20_000, "the edits to stop");
    // A canceled edit sends nothing more.
    expect(worker.callsFor(edit.job_id)).toEqual([]);
  }, 60_000);
});
