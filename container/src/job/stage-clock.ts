/**
 * Where a job's time goes: each stage's start and end, in milliseconds from
 * the moment the engine took the job. Stages overlap (the analysis runs while
 * the source downloads, uploads while later clips render), so they are
 * intervals, not a sequence. The list goes into the job's completion log line
 * and its complete report (the Worker adds the stages before and after the
 * engine: queued, dispatch, publish).
 */
import type { StageTiming } from "#contract";

export class StageClock {
  /** Epoch ms when the engine took the job. */
  readonly startedAt: number;
  readonly #stages: { stage: string; start: number; end: number | null }[] = [];

  constructor(startedAt: number = Date.now()) {
    this.startedAt = startedAt;
  }

  /** Starts a stage (at `at`, epoch ms, default now); the function returned ends it (once). */
  begin(stage: string, at: number = Date.now()): () => void {
    const entry = { stage, start: at - this.startedAt, end: null as number | null };
    this.#stages.push(entry);
    return () => {
      entry.end ??= Date.now() - this.startedAt;
    };
  }

  /** Runs `work` as one stage. */
  async time<T>(stage: string, work: () => Promise<T>): Promise<T> {
    const end = this.begin(stage);
    try {
      return await work();
    } finally {
      end();
    }
  }

  /** The stages ended so far, in the order they started. */
  timings(): StageTiming[] {
    return this.#stages
      .filter((s): s is { stage: string; start: number; end: number } => s.end !== null)
      .map((s) => ({ stage: s.stage, start_ms: s.start, end_ms: s.end }));
  }
}
