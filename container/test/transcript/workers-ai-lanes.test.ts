/**
 * The Workers AI stage's schedule, on real speech and real ffmpeg
 * extractions against the fake Worker, whose transcribe answers the tests
 * hold and release themselves: up to TRANSCRIBE_CONCURRENCY chunks in flight
 * with the next one extracted meanwhile; answers released in reverse order
 * give exactly what one chunk at a time gives; never more than K requests
 * open nor K + 1 WAVs on disk; an unavailable or failed answer, and a
 * cancel, stop every request and extraction before the stage returns.
 *
 * Every wait is on an event (a request arriving, an answer processed, an
 * extraction ending), never on time.
 */
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TranscriptWord } from "#contract";
import { cachedNarration, type Narration } from "../../../test/media/narration.ts";
import { JobAborted, type AbortKind } from "../../src/shared/errors.ts";
import type { FfmpegRunner } from "../../src/ffmpeg/runner.ts";
import { probeSource } from "../../src/source/probe.ts";
import { wordsFromCues } from "../../src/transcript/build.ts";
import { planChunks, type Span } from "../../src/transcript/chunk-plan.ts";
import { obtainTranscript } from "../../src/transcript/index.ts";
import { TRANSCRIBE_CONCURRENCY, transcribeWithWorkersAi, type WorkersAiOutcome } from "../../src/transcript/workers-ai.ts";
import type { SourceInfo } from "../../src/shared/types.ts";
import { newJobId } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker, type TranscribeAnswer } from "../helpers/fake-worker.ts";
import { Count, CountingReporter, HeldTranscribe, watchedRunner } from "../helpers/held-transcribe.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { ffmpegChildren } from "../helpers/processes.ts";
import { SCRIPT } from "../helpers/script.ts";

const K = TRANSCRIBE_CONCURRENCY;
const tokens = new Map<string, string>();
let worker: FakeWorker;
let dir: string;
let narration: Narration;
let source: SourceInfo;
let chunks: Span[];
/** The script's words with times, as a model hearing this audio would return them. */
let truth: TranscriptWord[];

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  dir = await osTempDir("workers-ai-lanes");
  worker = await startFakeWorker(tokens, dir);
  // About 3 minutes of talk: 7 chunks of 30 s, enough for K in flight and more waiting.
  narration = await cachedNarration({ sentences: [...SCRIPT, ...SCRIPT, ...SCRIPT, ...SCRIPT], gapSeconds: 0.9 });
  source = await probeSource({
    runner: nativeRunner(),
    path: narration.path,
    sizeBytes: (await readFile(narration.path)).length,
    videoUrl: "https://media.test/talk.mp4",
    platformTitle: null,
    maxSourceSeconds: 3600,
    signal: new AbortController().signal,
  });
  chunks = planChunks(source.durationSeconds, null);
  truth = wordsFromCues(narration.sentences.map((s) => ({ start: s.start, end: s.end, text: s.text })), narration.durationSeconds);
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await removeTempDirs();
});

function reporterFor(jobId: string): CountingReporter {
  const token = `token-${jobId}-abcdefghijkl`;
  tokens.set(jobId, token);
  return new CountingReporter({ callbackBase: worker.base, jobId, token, attempts: 2, retryBaseMs: 20, timeoutMs: 30_000, onInactive: () => undefined });
}

/** Per chunk, in order: a tie (3 to 3) that chunk order gives to "en", while arrival in reverse order would meet "de" first. */
const LANGUAGES = ["en", "de", "en", "de", "de", "en", null];

function chunkIndex(startSeconds: number): number {
  return chunks.findIndex((c) => Math.abs(c.start - startSeconds) < 0.0005);
}

/** What the model answers for a chunk: every word it hears in it, even one cut by the chunk's edge. */
function modelAnswer(startSeconds: number, seconds: number): TranscribeAnswer {
  const words = truth.filter((w) => w.end > startSeconds && w.start < startSeconds + seconds);
  return { status: 200, body: { language: LANGUAGES[chunkIndex(startSeconds)] ?? null, words } };
}

const UNAVAILABLE: TranscribeAnswer = { status: 503, body: { code: "transcription_unavailable", status: 503 } };
const FAILED: TranscribeAnswer = { status: 502, body: { code: "transcription_failed", status: 502 } };

async function wavsIn(work: string): Promise<string[]> {
  return (await readdir(work)).filter((name) => name.endsWith(".wav"));
}

interface Stage {
  jobId: string;
  work: string;
  reporter: CountingReporter;
  controller: AbortController;
  progress: number[];
  answered: Count;
}

async function stage(label: string): Promise<Stage> {
  const jobId = newJobId(label);
  const work = await mkdtemp(path.join(dir, `${label}-`));
  worker.resetTranscribeMostOpen();
  return { jobId, work, reporter: reporterFor(jobId), controller: new AbortController(), progress: [], answered: new Count() };
}

function transcribe(s: Stage, runner: FfmpegRunner, concurrency?: number): Promise<WorkersAiOutcome> {
  return transcribeWithWorkersAi({
    runner,
    reporter: s.reporter,
    source,
    speech: null,
    chunkPath: (i) => path.join(s.work, `speech-${i}.wav`),
    signal: s.controller.signal,
    onProgress: (fraction) => {
      s.progress.push(fraction);
      s.answered.add();
    },
    ...(concurrency === undefined ? {} : { concurrency }),
  });
}

/** obtainTranscript over the same stage; the source has no subtitle track, so a captions_url is the only other source. */
function transcriptOf(s: Stage, captionsUrl: boolean) {
  return obtainTranscript({
    runner: nativeRunner(),
    reporter: s.reporter,
    source,
    speech: null,
    workDir: s.work,
    file: (name) => path.join(s.work, name),
    platformYtdlp: null,
    captionsUrlCues: captionsUrl ? [{ start: 1, end: 3, text: "From the captions file." }] : null,
    jobId: s.jobId,
    signal: s.controller.signal,
    onProgress: (fraction) => {
      s.progress.push(fraction);
      s.answered.add();
    },
  });
}

/** After the stage returned: nothing of it is left running or on disk. */
async function expectNothingLeft(s: Stage): Promise<void> {
  expect(s.reporter.open).toBe(0);
  expect(await ffmpegChildren()).toEqual([]);
  expect(await wavsIn(s.work)).toEqual([]);
  // The engine closed every request it did not wait for; the fake Worker sees them all closed.
  await worker.transcribeIdle();
}

describe("Workers AI chunks in flight at once", () => {
  it("keeps K requests in flight while the next chunk is extracted, and answers released in reverse order give what one at a time gives", async () => {
    expect(chunks.length).toBeGreaterThanOrEqual(K + 2);
    const sequential = await stage("lanes-seq");
    worker.behaviour.transcribe = ({ startSeconds, wav }) => modelAnswer(startSeconds, (wav.length - 44) / 32000);
    const oneAtATime = await transcribe(sequential, nativeRunner(), 1);
    expect(sequential.reporter.mostOpen).toBe(1);

    const s = await stage("lanes");
    const held = new HeldTranscribe();
    worker.behaviour.transcribe = held.behaviour;
    const extracted = new Count();
    const running = transcribe(s, watchedRunner({ ended: () => extracted.add() }));
    // All K in flight at once, none answered yet, and the chunk after them already extracted.
    await held.arrivals.reach(K);
    await extracted.reach(K + 1);
    expect(held.requests).toHaveLength(K);
    expect(s.reporter.open).toBe(K);
    expect(worker.transcribeOpen).toBe(K);
    expect(s.progress).toEqual([]);
    expect(await wavsIn(s.work)).toHaveLength(K + 1);
    // Released last first, each answer taken in before the next goes out.
    const release = async (index: number) => {
      const request = held.at(chunks[index]!.start);
      request.answer(modelAnswer(request.startSeconds, request.seconds));
      await s.answered.reach(s.answered.value + 1);
    };
    for (let i = K - 1; i >= 0; i -= 1) await release(i);
    await held.arrivals.reach(chunks.length);
    for (let i = chunks.length - 1; i >= K; i -= 1) await release(i);
    const outcome = await running;

    expect(outcome.kind).toBe("ok");
    expect(outcome).toEqual(oneAtATime);
    if (outcome.kind !== "ok") return;
    expect(outcome.words.map((w) => w.text)).toEqual(truth.map((w) => w.text));
    expect(outcome.language).toBe("en");
    expect(s.progress).toEqual(chunks.map((_, i) => (i + 1) / chunks.length));
    expect(held.requests.map((r) => r.startSeconds).sort((a, b) => a - b)).toEqual(chunks.map((c) => Number(c.start.toFixed(3))));
    expect(worker.transcribeMostOpen).toBe(K);
    expect(s.reporter.mostOpen).toBe(K);
    await expectNothingLeft(s);
  });

  it.each([1, K])("never has more than %i requests open nor one WAV more on disk, and deletes each WAV once answered", async (lanes) => {
    const s = await stage(`most-${lanes}`);
    const held = new HeldTranscribe();
    worker.behaviour.transcribe = held.behaviour;
    const extracted = new Count();
    const running = transcribe(s, watchedRunner({ ended: () => extracted.add() }), lanes);
    let mostWavs = 0;
    // Step by step: the engine holds every request it may (`lanes`, or all that remain) and has the next chunk
    // extracted, so it could only send more by breaking the limit; then the oldest is answered.
    for (let answered = 0; answered < chunks.length; answered += 1) {
      const open = Math.min(lanes, chunks.length - answered);
      await held.arrivals.reach(answered + open);
      await extracted.reach(Math.min(chunks.length, answered + open + 1));
      // Reading the directory takes a trip through the event loop: whatever the engine would send next has gone out by now.
      mostWavs = Math.max(mostWavs, (await wavsIn(s.work)).length);
      expect(s.reporter.open).toBe(open);
      expect(held.requests).toHaveLength(answered + open);
      const oldest = held.at(chunks[answered]!.start);
      oldest.answer(modelAnswer(oldest.startSeconds, oldest.seconds));
      await s.answered.reach(answered + 1);
    }
    const outcome = await running;
    expect(outcome.kind === "ok" && outcome.words.map((w) => w.text)).toEqual(truth.map((w) => w.text));
    expect(worker.transcribeMostOpen).toBe(lanes);
    expect(s.reporter.mostOpen).toBe(lanes);
    expect(mostWavs).toBe(lanes + 1);
    await expectNothingLeft(s);
  });
});

describe("what ends the stage early", () => {
  it.each([
    { fallback: "the captions_url", captions: true },
    { fallback: "no other source", captions: false },
  ])("an unavailable answer from any chunk before a success means unavailable ($fallback), and no request stays open", async ({ captions }) => {
    const s = await stage("unavailable");
    const held = new HeldTranscribe();
    worker.behaviour.transcribe = held.behaviour;
    const running = transcriptOf(s, captions);
    await held.arrivals.reach(K);
    // Not chunk 0: any answer can come first now.
    held.at(chunks[2]!.start).answer(UNAVAILABLE);
    const outcome = await running;
    if (captions) {
      expect(outcome.transcript?.source).toBe("captions_url");
      expect(outcome.transcript?.words.map((w) => w.text)).toEqual(["From", "the", "captions", "file."]);
    } else {
      expect(outcome.transcript).toBeNull();
      expect(outcome.reason).toBe("No transcript: speech-to-text is not available on this deployment; the source has no subtitle track; no captions_url was given.");
    }
    await expectNothingLeft(s);
    const calls = worker.callsFor(s.jobId, "transcribe");
    // No request went out once the answer was known; the others were closed unanswered.
    expect(calls).toHaveLength(K);
    expect(calls.filter((c) => c.abandoned)).toHaveLength(K - 1);
  });

  it("an unavailable answer after a chunk succeeded: speech-to-text went away mid-job, which is a failure", async () => {
    const s = await stage("gone");
    const held = new HeldTranscribe();
    worker.behaviour.transcribe = held.behaviour;
    const running = transcribe(s, nativeRunner());
    await held.arrivals.reach(K);
    const second = held.at(chunks[1]!.start);
    second.answer(modelAnswer(second.startSeconds, second.seconds));
    await s.answered.reach(1);
    held.at(chunks[0]!.start).answer(UNAVAILABLE);
    expect(await running).toEqual({ kind: "failed", reason: "speech-to-text became unavailable mid-job" });
    await expectNothingLeft(s);
  });

  it("a failed chunk mid-way: no request starts after the failure is known, those in flight are closed, the transcript comes from the next source", async () => {
    const s = await stage("failed");
    const held = new HeldTranscribe();
    worker.behaviour.transcribe = held.behaviour;
    const running = transcriptOf(s, true);
    await held.arrivals.reach(K);
    for (const index of [0, 1]) {
      const request = held.at(chunks[index]!.start);
      request.answer(modelAnswer(request.startSeconds, request.seconds));
    }
    await s.answered.reach(2);
    // Chunks 2 to K + 1 are in flight; chunk 3 fails (the Worker's final answer after its retries).
    await held.arrivals.reach(K + 2);
    held.at(chunks[3]!.start).answer(FAILED);
    const outcome = await running;
    expect(outcome.transcript?.source).toBe("captions_url");
    await expectNothingLeft(s);
    const calls = worker.callsFor(s.jobId, "transcribe");
    expect(calls).toHaveLength(K + 2);
    const closed = calls.filter((c) => c.abandoned).map((c) => chunkIndex((c.body as { startSeconds: number }).startSeconds));
    expect(closed.sort((a, b) => a - b)).toEqual([2, ...Array.from({ length: K - 2 }, (_, i) => K + i)]);
    // A 502 is not retried by the engine: every chunk went out once.
    expect(new Set(calls.map((c) => (c.body as { startSeconds: number }).startSeconds)).size).toBe(calls.length);
  });

  it.each<AbortKind>(["canceled", "shutdown"])("a %s during the stage stops the extraction and every request before it returns", async (kind) => {
    const s = await stage(`stop-${kind}`);
    const held = new HeldTranscribe();
    worker.behaviour.transcribe = held.behaviour;
    let stopped: unknown = null;
    const runner = watchedRunner({
      // Chunk K's extraction starts only once K requests are in flight, and the job is stopped while it runs.
      before: async (index) => {
        if (index === K) await held.arrivals.reach(K);
      },
      started: (index) => {
        if (index !== K) return;
        s.controller.abort(new JobAborted(kind));
        // As runJob does: a cancel silences the reporter; a shutdown keeps it (it still reports "interrupted").
        if (kind === "canceled") s.reporter.silenceNow();
      },
      ended: (index, how) => {
        if (index === K && "stopped" in how) stopped = how.stopped;
      },
    });
    const error = await transcribe(s, runner).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JobAborted);
    expect((error as JobAborted).kind).toBe(kind);
    // The extraction was killed, not waited for.
    expect(stopped).toBeInstanceOf(JobAborted);
    await expectNothingLeft(s);
    const calls = worker.callsFor(s.jobId, "transcribe");
    expect(calls).toHaveLength(K);
    expect(calls.every((c) => c.abandoned)).toBe(true);
  });
});
