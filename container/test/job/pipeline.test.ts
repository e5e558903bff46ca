import { describe, expect, it } from "vitest";
import type { Stage } from "../../src/channel/progress.ts";
import { runStages, type JobStage, type StageRunContext } from "../../src/job/pipeline.ts";
import { StageClock } from "../../src/job/stage-clock.ts";
import { JobAborted, JobFailure } from "../../src/shared/errors.ts";

interface TestContext extends StageRunContext {
  ran: string[];
  steps: { stage: Stage; step: string }[];
}

function context(controller = new AbortController()): TestContext {
  const steps: { stage: Stage; step: string }[] = [];
  return { signal: controller.signal, clock: new StageClock(), progress: { enter: (stage, step) => void steps.push({ stage, step }) }, ran: [], steps };
}

function stage(name: string, extra: Partial<JobStage<TestContext>> = {}): JobStage<TestContext> {
  return {
    name,
    timing: () => name,
    async run(ctx) {
      ctx.ran.push(name);
    },
    ...extra,
  };
}

describe("runStages", () => {
  it("runs the stages in order, entering each one's progress step first and timing each once", async () => {
    const ctx = context();
    const stepWhenRun: string[] = [];
    const stages = [
      stage("download", { progress: () => ({ stage: "download", step: "Downloading video" }) }),
      // Untimed: a stage that only reads what came before.
      stage("check", { timing: () => null }),
      stage("probe", {
        progress: () => ({ stage: "probe", step: "Probing video" }),
        async run(c) {
          stepWhenRun.push(c.steps.at(-1)!.step);
          c.ran.push("probe");
        },
      }),
      stage("complete"),
    ];
    expect(await runStages(stages, ctx)).toBe("completed");
    expect(ctx.ran).toEqual(["download", "check", "probe", "complete"]);
    expect(ctx.steps).toEqual([
      { stage: "download", step: "Downloading video" },
      { stage: "probe", step: "Probing video" },
    ]);
    expect(stepWhenRun).toEqual(["Probing video"]);
    const timings = ctx.clock.timings();
    expect(timings.map((t) => t.stage)).toEqual(["download", "probe", "complete"]);
    for (const t of timings) expect(t.end_ms).toBeGreaterThanOrEqual(t.start_ms);
  });

  it("times a stage from when its work began when it says so", async () => {
    const ctx = context();
    ctx.clock = new StageClock(Date.now() - 60_000);
    await runStages([stage("analysis", { timedFrom: (c) => c.clock.startedAt + 5 })], ctx);
    expect(ctx.clock.timings()).toEqual([expect.objectContaining({ stage: "analysis", start_ms: 5 })]);
  });

  it("stops at a failing stage with its failure, and runs nothing after it", async () => {
    const ctx = context();
    const stages = [
      stage("download"),
      stage("probe", {
        async run() {
          throw new JobFailure("captions_invalid", "captions_url: none of the file's cues fall within the video's length.");
        },
      }),
      stage("analysis"),
    ];
    const error = await runStages(stages, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailure);
    expect((error as JobFailure).code).toBe("captions_invalid");
    expect(ctx.ran).toEqual(["download"]);
    expect(ctx.clock.timings().map((t) => t.stage)).toEqual(["download", "probe"]);
  });

  it("stops between stages once the job is canceled, with the cancel as the reason", async () => {
    const controller = new AbortController();
    const ctx = context(controller);
    const stages = [
      stage("download", {
        async run(c) {
          c.ran.push("download");
          // A cancel arriving while the stage finishes work that does not watch the signal.
          controller.abort(new JobAborted("canceled"));
        },
      }),
      stage("probe", { progress: () => ({ stage: "probe", step: "Probing video" }) }),
    ];
    const error = await runStages(stages, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobAborted);
    expect((error as JobAborted).kind).toBe("canceled");
    expect(ctx.ran).toEqual(["download"]);
    expect(ctx.steps).toEqual([]);
  });

  it("ends the run early with the outcome a stage answers", async () => {
    const ctx = context();
    const stages = [stage("probe", { run: async () => "refused" as const }), stage("analysis")];
    expect(await runStages(stages, ctx)).toBe("refused");
    expect(ctx.ran).toEqual([]);
    expect(ctx.clock.timings().map((t) => t.stage)).toEqual(["probe"]);
  });
});
