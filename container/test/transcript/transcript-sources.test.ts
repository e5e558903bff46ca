/**
 * The transcript sources one by one, against real media and the fake Worker:
 * Workers AI through the channel (chunking, WAV format, seams, 503/502
 * outcomes), the order of sources and the reason recorded when none yields a
 * transcript, and platform subtitles through a stand-in yt-dlp.
 */
import { chmod, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSCRIBE_MAX_CHUNK_BYTES, TRANSCRIBE_MAX_CHUNK_SECONDS, type TranscriptWord } from "#contract";
import { cachedNarration, type Narration } from "../../../test/media/narration.ts";
import { probeSource } from "../../src/source/probe.ts";
import { JobReporter } from "../../src/channel/report.ts";
import { wordsFromCues } from "../../src/transcript/build.ts";
import { obtainTranscript } from "../../src/transcript/index.ts";
import { buildSubtitleArgs, chooseSubtitles, platformSubtitles } from "../../src/transcript/platform.ts";
import { planChunks } from "../../src/transcript/chunk-plan.ts";
import type { SourceInfo } from "../../src/shared/types.ts";
import { newJobId } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { SCRIPT } from "../helpers/script.ts";

const runner = nativeRunner();
const tokens = new Map<string, string>();
let worker: FakeWorker;
let withTrack: { narration: Narration; source: SourceInfo };
let withoutTrack: { narration: Narration; source: SourceInfo };
let dir: string;

async function probed(narration: Narration): Promise<SourceInfo> {
  return probeSource({
    runner,
    path: narration.path,
    sizeBytes: (await readFile(narration.path)).length,
    videoUrl: "https://media.test/talk.mp4",
    platformTitle: null,
    maxSourceSeconds: 3600,
    signal: new AbortController().signal,
  });
}

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  dir = await osTempDir("transcript-sources");
  worker = await startFakeWorker(tokens, dir);
  const a = await cachedNarration({ sentences: SCRIPT, bedDb: 18, subtitleTrack: true, gapSeconds: 0.9 });
  const b = await cachedNarration({ sentences: SCRIPT.slice(0, 8), subtitleTrack: false, gapSeconds: 0.9 });
  withTrack = { narration: a, source: await probed(a) };
  withoutTrack = { narration: b, source: await probed(b) };
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await removeTempDirs();
});

function reporterFor(jobId: string): JobReporter {
  const token = `token-${jobId}-abcdefghijkl`;
  tokens.set(jobId, token);
  return new JobReporter({ callbackBase: worker.base, jobId, token, attempts: 2, retryBaseMs: 20, timeoutMs: 10_000, onInactive: () => undefined });
}

/** The script's words with times, as a model hearing this audio would return them. */
function scriptWords(narration: Narration): TranscriptWord[] {
  return wordsFromCues(narration.sentences.map((s) => ({ start: s.start, end: s.end, text: s.text })), narration.durationSeconds);
}

function request(jobId: string, source: SourceInfo, speech: { start: number; end: number }[] | null) {
  return {
    runner,
    reporter: reporterFor(jobId),
    source,
    speech,
    workDir: dir,
    file: (name: string) => path.join(dir, `${jobId}-${name}`),
    platformYtdlp: null,
    captionsUrlCues: null,
    jobId,
    signal: new AbortController().signal,
    onProgress: () => undefined,
  };
}

describe("chunk planning", () => {
  it("covers the speech with chunks of at most 30 s overlapping by 1 s, skipping long silences", () => {
    expect(planChunks(70, null)).toEqual([
      { start: 0, end: 30 },
      { start: 29, end: 59 },
      { start: 58, end: 70 },
    ]);
    const chunks = planChunks(300, [{ start: 10, end: 20 }, { start: 21, end: 25 }, { start: 200, end: 245 }]);
    expect(chunks).toEqual([
      { start: 9.7, end: 25.3 },
      { start: 199.7, end: 229.7 },
      { start: 228.7, end: 245.3 },
    ]);
  });
});

describe("Workers AI through the channel", () => {
  it("sends mono 16 kHz WAV chunks with their start and stitches the answers without doubled words", async () => {
    const jobId = newJobId("stt");
    const { narration, source } = withTrack;
    const truth = scriptWords(narration);
    const seen: { start: number; bytes: number; channels: number; rate: number }[] = [];
    worker.behaviour.transcribe = ({ startSeconds, wav }) => {
      const channels = wav.readUInt16LE(22);
      const rate = wav.readUInt32LE(24);
      const seconds = (wav.length - 44) / (rate * 2 * channels);
      seen.push({ start: startSeconds, bytes: wav.length, channels, rate });
      // Like the model: every word it hears in the chunk, even one cut by the chunk's edge.
      const words = truth.filter((w) => w.end > startSeconds && w.start < startSeconds + seconds);
      return { status: 200, body: { language: "en", words } };
    };
    const outcome = await obtainTranscript(request(jobId, source, null));
    worker.behaviour.transcribe = undefined;
    expect(outcome.reason).toBeNull();
    expect(outcome.transcript?.source).toBe("workers_ai");
    expect(outcome.transcript?.language).toBe("en");
    expect(outcome.transcript?.words.map((w) => w.text)).toEqual(truth.map((w) => w.text));
    expect(outcome.transcript?.sentences.map((s) => s.text)).toEqual(SCRIPT);
    expect(seen.length).toBe(Math.ceil((narration.durationSeconds - 1) / (TRANSCRIBE_MAX_CHUNK_SECONDS - 1)));
    for (const chunk of seen) {
      expect(chunk.channels).toBe(1);
      expect(chunk.rate).toBe(16000);
      expect(chunk.bytes).toBeLessThanOrEqual(TRANSCRIBE_MAX_CHUNK_BYTES);
    }
    expect(seen.map((c) => c.start)).toEqual(seen.map((_, i) => i * (TRANSCRIBE_MAX_CHUNK_SECONDS - 1)));
  });

  it("sends only the speech parts when the analysis knows them", async () => {
    const jobId = newJobId("sttspans");
    const starts: number[] = [];
    worker.behaviour.transcribe = ({ startSeconds }) => {
      starts.push(startSeconds);
      return { status: 200, body: { language: "en", words: [{ text: "hello.", start: startSeconds + 0.5, end: startSeconds + 1 }] } };
    };
    const outcome = await obtainTranscript(request(jobId, withTrack.source, [{ start: 2, end: 5 }, { start: 40, end: 44 }]));
    worker.behaviour.transcribe = undefined;
    expect(starts).toEqual([1.7, 39.7]);
    expect(outcome.transcript?.words.map((w) => w.start)).toEqual([2.2, 40.2]);
  });

  it("falls back to the subtitle track when the Worker has no speech-to-text (503), and after a failure (502)", async () => {
    const unavailable = await obtainTranscript(request(newJobId("stt503"), withTrack.source, null));
    expect(unavailable.transcript?.source).toBe("subtitle_track");
    const failingJob = newJobId("stt502");
    worker.behaviour.transcribe = () => ({ status: 502, body: { code: "transcription_failed", status: 502 } });
    const failed = await obtainTranscript(request(failingJob, withTrack.source, null));
    worker.behaviour.transcribe = undefined;
    expect(failed.transcript?.source).toBe("subtitle_track");
    // 502 is the Worker's final answer (it retried the model itself): no chunk is sent twice, no retry storm.
    // (A chunk after the first may have gone out before the 502 came back: several are in flight at once.)
    const starts = worker.callsFor(failingJob, "transcribe").map((c) => (c.body as { startSeconds: number }).startSeconds);
    expect(starts.length).toBeGreaterThanOrEqual(1);
    expect(new Set(starts).size).toBe(starts.length);
  });

  it("reads the subtitle track from the streams the source's probe listed, and probes for them itself when a SourceInfo has none", async () => {
    expect(withTrack.source.subtitleStreams?.map((s) => s.codec_name)).toEqual(["mov_text"]);
    expect(withoutTrack.source.subtitleStreams).toEqual([]);
    const { subtitleStreams: _listed, ...unlisted } = withTrack.source;
    const fromProbe = await obtainTranscript(request(newJobId("listed"), withTrack.source, null));
    const probedItself = await obtainTranscript(request(newJobId("unlisted"), unlisted, null));
    expect(probedItself.transcript?.source).toBe("subtitle_track");
    expect(probedItself.transcript).toEqual(fromProbe.transcript);
  });

  it("records why there is no transcript when no source has one", async () => {
    const outcome = await obtainTranscript(request(newJobId("none"), withoutTrack.source, null));
    expect(outcome.transcript).toBeNull();
    expect(outcome.reason).toBe(
      "No transcript: speech-to-text is not available on this deployment; the source has no subtitle track; no captions_url was given.",
    );
  });

  it("uses the client's captions_url last", async () => {
    const cues = [{ start: 1, end: 3, text: "From the captions file." }];
    const outcome = await obtainTranscript({ ...request(newJobId("curl"), withoutTrack.source, null), captionsUrlCues: cues });
    expect(outcome.transcript?.source).toBe("captions_url");
    expect(outcome.transcript?.sentences).toEqual([{ text: "From the captions file.", start: 1, end: 3 }]);
  });
});

describe("platform subtitles", () => {
  it("prefers uploaded subtitles in the video's language, then its original automatic track", () => {
    expect(chooseSubtitles({ language: "de", subtitles: { en: [], de: [] }, automatic_captions: { "de-orig": [] } })).toEqual({ language: "de", automatic: false });
    expect(chooseSubtitles({ language: "de", subtitles: { en: [] }, automatic_captions: { "de-orig": [], fr: [] } })).toEqual({ language: "de-orig", automatic: true });
    expect(chooseSubtitles({ subtitles: { fr: [], "en-GB": [] } })).toEqual({ language: "en-GB", automatic: false });
    // Without a known language, automatic tracks may be machine translations: only "-orig" is taken.
    expect(chooseSubtitles({ automatic_captions: { fr: [], es: [] } })).toBeNull();
    expect(chooseSubtitles({ subtitles: { live_chat: [] } })).toBeNull();
  });

  it("fetches the chosen track with a second yt-dlp run from the saved metadata", async () => {
    const work = await osTempDir("platform-subs");
    await writeFile(path.join(work, "source.info.json"), JSON.stringify({ language: "en", subtitles: {}, automatic_captions: { "en-orig": [{}], de: [{}] } }));
    const script = path.join(work, "yt-dlp");
    // Stand-in yt-dlp: records its arguments and writes the subtitle file it was asked for.
    await writeFile(
      script,
      `#!/bin/sh\nprintf '%s\\n' "$@" > "${work}/argv.txt"\nprintf 'WEBVTT\\n\\n00:00:01.000 --> 00:00:02.500\\nhello from the platform.\\n' > "${work}/platform-subs.en-orig.vtt"\n`,
    );
    await chmod(script, 0o755);
    const result = await platformSubtitles(script, work, new AbortController().signal);
    expect(result.found).toEqual({ cues: [{ start: 1, end: 2.5, text: "hello from the platform." }], language: "en", automatic: true });
    const argv = (await readFile(path.join(work, "argv.txt"), "utf8")).trim().split("\n");
    expect(argv).toEqual(buildSubtitleArgs(work, { language: "en-orig", automatic: true }));
    expect(argv).toContain("--skip-download");
    expect(argv[argv.indexOf("--sub-langs") + 1]).toBe("en-orig");
  });

  it("goes on without platform subtitles when yt-dlp fails or writes garbage", async () => {
    const work = await osTempDir("platform-subs-bad");
    await writeFile(path.join(work, "source.info.json"), JSON.stringify({ subtitles: { en: [{}] } }));
    const script = path.join(work, "yt-dlp");
    await writeFile(script, `#!/bin/sh\nprintf 'garbage' > "${work}/platform-subs.en.vtt"\n`);
    await chmod(script, 0o755);
    const garbage = await platformSubtitles(script, work, new AbortController().signal);
    expect(garbage.found).toBeNull();
    expect(garbage.note).toMatch(/unusable/);
    await writeFile(script, "#!/bin/sh\nexit 1\n");
    const failing = await platformSubtitles(script, await osTempDir("platform-subs-none"), new AbortController().signal);
    expect(failing).toEqual({ found: null, note: "the platform gave no metadata" });
  });
});
