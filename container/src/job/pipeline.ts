/**
 * Runs a job's stages in order, with what every stage needs said once here
 * instead of inside each: a cancel or a shutdown stops the job between two
 * stages (the signal is checked before each one starts), the stage's
 * progress step is entered before it runs, and its StageTiming is recorded
 * when it ends (stage-clock.ts). A stage that throws ends the run with its
 * error (the job turns it into its failure, run.ts); a stage that answers an
 * outcome ends the run there with that outcome (the Worker refused the job).
 */
import type { ProgressTracker, Stage as ProgressStage } from "../channel/progress.ts";
import type { StageClock } from "./stage-clock.ts";

/** What the runner itself uses of a job's context. */
export interface StageRunContext {
  signal: AbortSignal;
  clock: StageClock;
  progress: Pick<ProgressTracker, "enter">;
}

/** How a stage ends the job early; nothing: the next stage runs. */
export type StageEnd = "refused";

export interface JobStage<C extends StageRunContext> {
  /** What the stage does, for logs and tests. */
  readonly name: string;
  /** The progress step entered before the stage runs; absent or null: the stage reports its own steps, if any. */
  progress?(ctx: C): { stage: ProgressStage; step: string } | null;
  /** The stage's name in the job's StageTiming report; absent or null: the stage is not timed as a whole. */
  timing?(ctx: C): string | null;
  /** When the timed interval began, if earlier than the stage (work it finishes began during an earlier one). */
  timedFrom?(ctx: C): number | null;
  run(ctx: C): Promise<StageEnd | void>;
}

/** Runs the stages in order: "completed" when all ran, or the outcome a stage ended the job with. */
export async function runStages<C extends StageRunContext>(stages: readonly JobStage<C>[], ctx: C): Promise<"completed" | StageEnd> {
  for (const stage of stages) {
    ctx.signal.throwIfAborted();
    const step = stage.progress?.(ctx) ?? null;
    if (step) ctx.progress.enter(step.stage, step.step);
    const timing = stage.timing?.(ctx) ?? null;
    const startedAt = Date.now();
    let end: StageEnd | void;
    try {
      end = await stage.run(ctx);
    } finally {
      if (timing !== null) ctx.clock.begin(timing, stage.timedFrom?.(ctx) ?? startedAt)();
    }
    if (end) return end;
  }
  return "completed";
}
