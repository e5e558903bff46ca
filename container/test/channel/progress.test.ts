import { describe, expect, it } from "vitest";
import type { ProgressReport } from "#contract";
import { ProgressTracker } from "../../src/channel/progress.ts";
import { waitFor } from "../helpers/servers.ts";

describe("ProgressTracker", () => {
  it("sends every step change, keeps progress monotonic and within 0-99", async () => {
    const sent: ProgressReport[] = [];
    const tracker = new ProgressTracker(async (r) => {
      sent.push(r);
    }, 60_000);
    tracker.enter("download", "Downloading video");
    await waitFor(() => sent.length === 1);
    tracker.update(0.5);
    tracker.update(0.2); // a smaller fraction never lowers progress
    tracker.enter("probe", "Probing video");
    await waitFor(() => sent.some((r) => r.step === "Probing video"));
    tracker.enter("render", "Rendering clip 2 of 2", { index: 1, count: 2 });
    tracker.update(1);
    tracker.enter("upload", "Uploading clips");
    tracker.update(1);
    await waitFor(() => sent.at(-1)?.step === "Uploading clips");
    await tracker.stop();
    const values = sent.map((r) => r.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(tracker.current.progress).toBe(99);
    expect(new Set(sent.map((r) => r.step))).toEqual(new Set(["Downloading video", "Probing video", "Rendering clip 2 of 2", "Uploading clips"]));
  });

  it("sends a heartbeat while nothing changes and nothing after stop", async () => {
    const sent: ProgressReport[] = [];
    const tracker = new ProgressTracker(async (r) => {
      sent.push(r);
    }, 200);
    tracker.start();
    tracker.enter("analyse", "Analyzing video");
    await waitFor(() => sent.length >= 3, 5_000, "heartbeats");
    expect(sent.every((r) => r.step === "Analyzing video")).toBe(true);
    await tracker.stop();
    const count = sent.length;
    tracker.enter("render", "Rendering clip 1 of 1");
    expect(sent.length).toBe(count);
  });

  it("keeps one report in flight and sends the latest state after it", async () => {
    const sent: ProgressReport[] = [];
    let release: () => void = () => undefined;
    const tracker = new ProgressTracker(
      (r) =>
        new Promise<void>((resolve) => {
          sent.push(r);
          release = resolve;
        }),
      60_000,
    );
    tracker.enter("download", "Downloading video");
    tracker.enter("probe", "Probing video");
    tracker.enter("analyse", "Analyzing video");
    expect(sent.map((r) => r.step)).toEqual(["Downloading video"]);
    release();
    await waitFor(() => sent.length === 2);
    expect(sent[1]?.step).toBe("Analyzing video");
    release();
    await tracker.stop();
  });
});
