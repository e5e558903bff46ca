import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobAborted } from "../../src/shared/errors.ts";
import { JobReporter, type ReporterOptions } from "../../src/channel/report.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { osTempDir, removeTempDirs } from "../helpers/media.ts";
import { startRecordingServer } from "../helpers/servers.ts";

const JOB = "job_reportTest000000001";
const TOKEN = "token-for-report-test-000000";
let worker: FakeWorker;
let dir: string;

beforeAll(async () => {
  dir = await osTempDir("report");
  worker = await startFakeWorker(new Map([[JOB, TOKEN]]), dir);
});
afterAll(async () => {
  await worker.close();
});

function reporter(overrides: Partial<ReporterOptions> = {}): JobReporter {
  return new JobReporter({
    callbackBase: worker.base,
    jobId: JOB,
    token: TOKEN,
    attempts: 4,
    retryBaseMs: 20,
    timeoutMs: 5_000,
    onInactive: () => undefined,
    ...overrides,
  });
}

describe("JobReporter", () => {
  it("retries 5xx answers with backoff and then succeeds", async () => {
    worker.behaviour.override = ({ kind, count }) => (kind === "probe" && count <= 2 ? 503 : undefined);
    const ack = await reporter().probe({ duration_seconds: 10, title: "t", width: 1, height: 1, format: "mov", size_bytes: 1 });
    expect(ack.proceed).toBe(true);
    expect(worker.callsFor(JOB, "probe")).toHaveLength(1);
    worker.behaviour.override = undefined;
  });

  it("gives up after the configured attempts", async () => {
    let seen = 0;
    worker.behaviour.override = ({ kind }) => {
      if (kind !== "complete") return undefined;
      seen += 1;
      return 502;
    };
    await expect(reporter({ attempts: 3 }).complete({ title: "t", source_duration_seconds: 1, clips: [], transcript: null, transcript_unavailable_reason: null, translation: null })).rejects.toThrow(/502/);
    expect(seen).toBe(3);
    worker.behaviour.override = undefined;
  });

  it("sends a completion again while the Worker answers completion_in_progress, without spending its attempts", async () => {
    let seen = 0;
    worker.behaviour.override = ({ kind }) => {
      if (kind !== "complete") return undefined;
      seen += 1;
      return seen <= 6 ? { status: 503, code: "completion_in_progress" } : undefined;
    };
    const before = worker.callsFor(JOB, "complete").length;
    await reporter({ attempts: 2 }).complete({ title: "t", source_duration_seconds: 1, clips: [], transcript: null, transcript_unavailable_reason: null, translation: null });
    expect(seen).toBe(7);
    expect(worker.callsFor(JOB, "complete")).toHaveLength(before + 1);
    // Any other 503 still spends an attempt: two attempts, then the error.
    seen = 0;
    worker.behaviour.override = ({ kind }) => (kind === "complete" ? ((seen += 1), 503) : undefined);
    await expect(reporter({ attempts: 2 }).complete({ title: "t", source_duration_seconds: 1, clips: [], transcript: null, transcript_unavailable_reason: null, translation: null })).rejects.toThrow(/503/);
    expect(seen).toBe(2);
    worker.behaviour.override = undefined;
  });

  it("retries network errors", async () => {
    const flaky = await startRecordingServer((req, res) => {
      if (flaky.requests.length === 1) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
    try {
      await reporter({ callbackBase: flaky.url("") }).progress({ progress: 1, step: "Downloading video" });
      expect(flaky.requests).toHaveLength(2);
    } finally {
      await flaky.close();
    }
  });

  it("treats 409 as the end of the job: aborts once and refuses every later call", async () => {
    let inactive = 0;
    worker.behaviour.override = ({ kind }) => (kind === "progress" ? 409 : undefined);
    const r = reporter({ onInactive: () => (inactive += 1) });
    await expect(r.progress({ progress: 5, step: "Downloading video" })).rejects.toBeInstanceOf(JobAborted);
    expect(inactive).toBe(1);
    worker.behaviour.override = undefined;
    const before = worker.calls.length;
    await expect(r.fail({ code: "internal_error", message: "x" })).rejects.toBeInstanceOf(JobAborted);
    expect(worker.calls.length).toBe(before);
  });

  it("does not retry other 4xx answers", async () => {
    await expect(reporter({ token: "wrong-token-000000000000" }).progress({ progress: 1, step: "x" })).rejects.toThrow(/401/);
  });

  it("streams a file upload with its length and reports the bytes sent", async () => {
    const file = path.join(dir, "clip.bin");
    const body = Buffer.alloc(300_000, 3);
    await writeFile(file, body);
    let sent = 0;
    await reporter().putFile("clips/2", file, "video/mp4", (n) => (sent += n));
    const call = worker.callsFor(JOB, "clip").at(-1);
    expect(call?.index).toBe(2);
    expect(call?.bytes).toBe(body.length);
    expect(call?.contentType).toBe("video/mp4");
    expect(sent).toBe(body.length);
  });
});

afterAll(removeTempDirs);
