/**
 * Where a job's time goes: StartJob carries when the job was
 * submitted, when its dispatch began, when the fleet granted an engine and
 * when StartJob was sent; the engine hands them back with its
 * stages in the complete report, and the Worker logs one line per completed
 * job with every stage from submission, in order: queued, dispatch, the
 * engine's, publish.
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import type { JobTimings } from "#contract";
import { clipReport, expectAck, FakeEngine } from "./engine-stub.ts";
import { createAccount } from "./helpers.ts";
import { getJob, startJob } from "./jobs-helpers.ts";

let engine: FakeEngine;
let logged: string[];
let spy: MockInstance<typeof console.log>;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
  logged = [];
  spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    logged.push(args.map(String).join(" "));
  });
});
afterEach(() => {
  spy.mockRestore();
});

interface CompletionLine {
  event: string;
  job_id: string;
  clips: number;
  total_ms: number;
  stages: { stage: string; start_ms: number; end_ms: number }[];
}

function completionLine(jobId: string): CompletionLine {
  const lines = logged
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as CompletionLine)
    .filter((line) => line.event === "job_completed" && line.job_id === jobId);
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("stage timings", () => {
  it("StartJob carries the submission and dispatch times; the completion line lists every stage from submission, in order", async () => {
    const account = await createAccount();
    const before = Date.now();
    const client = await startJob(account, engine);
    const start = engine.starts(client.jobId).at(-1)!;
    const submitted = Date.parse((await getJob(account, client.jobId)).created_at);
    expect(start.timeline).toBeDefined();
    expect(start.timeline!.submitted_at).toBe(submitted);
    expect(start.timeline!.dispatched_at).toBeGreaterThanOrEqual(start.timeline!.submitted_at);
    expect(start.timeline!.dispatched_at).toBeGreaterThanOrEqual(before);
    expect(start.timeline!.dispatched_at).toBeLessThanOrEqual(Date.now());
    // The dispatch split: the fleet's grant, then StartJob sent, both within the dispatch.
    const granted = start.timeline!.granted_at!;
    const sent = start.timeline!.sent_at!;
    expect(granted).toBeGreaterThanOrEqual(start.timeline!.dispatched_at);
    expect(sent).toBeGreaterThanOrEqual(granted);
    expect(sent).toBeLessThanOrEqual(Date.now());

    // The engine took the job 40 ms after the dispatch began, as its report says.
    const engineStartedAt = sent + 40;
    await client.probe({ duration_seconds: 60 });
    await client.uploadClip(0);
    const timings: JobTimings = {
      timeline: start.timeline,
      engine_started_at: engineStartedAt,
      stages: [
        { stage: "download", start_ms: 0, end_ms: 900 },
        { stage: "probe", start_ms: 900, end_ms: 1000 },
        { stage: "analysis", start_ms: 300, end_ms: 1400 },
        { stage: "transcript", start_ms: 1400, end_ms: 1500 },
        { stage: "render 0", start_ms: 1500, end_ms: 4000 },
        { stage: "upload 0", start_ms: 4000, end_ms: 4100 },
      ],
    };
    const arrived = Date.now();
    await expectAck(await client.complete({ title: "Talk", source_duration_seconds: 60, clips: [clipReport(0)], timings }));
    const done = Date.now();

    const line = completionLine(client.jobId);
    expect(line.clips).toBe(1);
    expect(line.stages.map((s) => s.stage)).toEqual(["queued", "dispatch", "dispatch: fleet grant", "dispatch: bookkeeping", "dispatch: StartJob", "download", "probe", "analysis", "transcript", "render 0", "upload 0", "publish"]);
    const at = (stage: string) => line.stages.find((s) => s.stage === stage)!;
    const dispatchedMs = start.timeline!.dispatched_at - submitted;
    expect(at("queued")).toEqual({ stage: "queued", start_ms: 0, end_ms: dispatchedMs });
    const engineMs = engineStartedAt - submitted;
    expect(at("dispatch")).toEqual({ stage: "dispatch", start_ms: dispatchedMs, end_ms: engineMs });
    expect(at("dispatch: fleet grant")).toEqual({ stage: "dispatch: fleet grant", start_ms: dispatchedMs, end_ms: granted - submitted });
    expect(at("dispatch: bookkeeping")).toEqual({ stage: "dispatch: bookkeeping", start_ms: granted - submitted, end_ms: sent - submitted });
    expect(at("dispatch: StartJob")).toEqual({ stage: "dispatch: StartJob", start_ms: sent - submitted, end_ms: engineMs });
    // The engine's stages, moved to submission time; they may overlap (the analysis during the download).
    expect(at("analysis")).toEqual({ stage: "analysis", start_ms: engineMs + 300, end_ms: engineMs + 1400 });
    expect(at("upload 0")).toEqual({ stage: "upload 0", start_ms: engineMs + 4000, end_ms: engineMs + 4100 });
    // Publish: from the complete call's arrival to the job completed.
    expect(at("publish").start_ms).toBeGreaterThanOrEqual(arrived - submitted);
    expect(at("publish").end_ms).toBeGreaterThanOrEqual(at("publish").start_ms);
    expect(at("publish").end_ms).toBeLessThanOrEqual(done - submitted);
    expect(line.total_ms).toBe(at("publish").end_ms);
    for (const stage of line.stages) expect(stage.end_ms).toBeGreaterThanOrEqual(stage.start_ms);
  });

  it("an engine that sends no timings still gets its completion line, with the publish stage", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await client.probe({ duration_seconds: 30 });
    await client.uploadClip(0);
    await expectAck(await client.complete({ title: "Talk", source_duration_seconds: 30, clips: [clipReport(0)] }));
    const line = completionLine(client.jobId);
    expect(line.stages.map((s) => s.stage)).toEqual(["publish"]);
    expect(line.total_ms).toBeGreaterThan(0);
  });

  it("a repeated complete logs nothing more", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await client.uploadClip(0);
    const report = { title: "Talk", source_duration_seconds: 30, clips: [clipReport(0)] };
    await expectAck(await client.complete(report));
    await expectAck(await client.complete(report));
    completionLine(client.jobId);
  });
});
