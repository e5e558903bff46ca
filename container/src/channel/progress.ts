import type { ProgressReport } from "#contract";

/**
 * Turns per-stage fractions of measured work into the job's overall 0-99
 * progress and sends it: at once on every step change, at most about once a
 * second while the number moves, and as a heartbeat when nothing changed for
 * a while, so the Worker's silence watchdog only fires on a stuck engine.
 */
export type Stage = "download" | "probe" | "analyse" | "transcribe" | "render" | "upload";

/** Share of the 0-99 range per stage, in pipeline order. */
const STAGE_RANGES: Record<Stage, [number, number]> = {
  download: [0, 15],
  probe: [15, 17],
  analyse: [17, 34],
  transcribe: [34, 40],
  render: [40, 92],
  upload: [92, 99],
};

const MIN_GAP_MS = 1000;

export class ProgressTracker {
  private readonly send: (report: ProgressReport) => Promise<void>;
  private readonly heartbeatMs: number;
  private range: [number, number] = [0, 0];
  private step = "Starting";
  private progress = 0;
  private lastSentAt = 0;
  private lastSent: ProgressReport | undefined;
  private inFlight: Promise<void> | undefined;
  private queued = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(send: (report: ProgressReport) => Promise<void>, heartbeatMs: number) {
    this.send = send;
    this.heartbeatMs = heartbeatMs;
  }

  start(): void {
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastSentAt >= this.heartbeatMs) this.flush();
    }, Math.max(250, Math.floor(this.heartbeatMs / 2)));
    this.heartbeat.unref();
  }

  /** Enters a stage (or a part of one, e.g. one clip of the render stage). */
  enter(stage: Stage, step: string, part?: { index: number; count: number }): void {
    const [from, to] = STAGE_RANGES[stage];
    if (part && part.count > 0) {
      const width = (to - from) / part.count;
      this.range = [from + width * part.index, from + width * (part.index + 1)];
    } else {
      this.range = [from, to];
    }
    this.step = step.slice(0, 120);
    this.raise(this.range[0]);
    this.flush();
  }

  /** Fraction (0-1) of the current stage or part that is done. */
  update(fraction: number): void {
    if (!Number.isFinite(fraction)) return;
    const clamped = Math.min(1, Math.max(0, fraction));
    const [from, to] = this.range;
    const before = this.progress;
    this.raise(from + (to - from) * clamped);
    if (this.progress !== before && Date.now() - this.lastSentAt >= MIN_GAP_MS) this.flush();
  }

  /** Stops the heartbeat and waits for a report in flight, so nothing follows the final callback. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.queued = false;
    await this.inFlight?.catch(() => undefined);
  }

  get current(): ProgressReport {
    return { progress: this.progress, step: this.step };
  }

  private raise(value: number): void {
    this.progress = Math.max(this.progress, Math.min(99, Math.floor(value)));
  }

  private flush(): void {
    if (this.stopped) return;
    if (this.inFlight) {
      this.queued = true;
      return;
    }
    const report = this.current;
    this.lastSentAt = Date.now();
    this.lastSent = report;
    this.inFlight = this.send(report)
      .catch(() => undefined)
      .finally(() => {
        this.inFlight = undefined;
        if (this.queued && !this.stopped) {
          this.queued = false;
          const latest = this.current;
          if (latest.progress !== this.lastSent?.progress || latest.step !== this.lastSent?.step) this.flush();
        }
      });
  }
}
