/**
 * Simulated time for the fleet suites: a discrete-event clock whose tasks
 * run for real (Worker code, Durable Objects, D1) and wait on simulated time
 * only where the modelled platform would make them wait (a container start,
 * the library's retry loop, a grace period).
 *
 * Tasks are cooperative. Every task due at the current instant starts; the
 * clock moves to the next instant only once every task has finished or is
 * asleep on the clock (`sleep`). Nothing here reads the wall clock, so an
 * outcome never depends on how loaded the machine is.
 */
interface Pending {
  at: number;
  seq: number;
  fire: () => void;
}

export class SimClock {
  private time = 0;
  private seq = 0;
  private readonly events: Pending[] = [];
  /** Tasks running (not asleep on the clock). */
  private busy = 0;
  private quietWaiters: (() => void)[] = [];
  private failure: unknown = null;

  /** @param epochMs wall-clock milliseconds that simulated second 0 stands for (what `epochMs()` maps from). */
  constructor(readonly epochBaseMs = 1_800_000_000_000) {}

  /** Simulated seconds since the start. */
  now(): number {
    return this.time;
  }

  /** The simulated moment as epoch milliseconds (what Worker code sees through the fleet's time seam). */
  epochMs(): number {
    return this.epochBaseMs + Math.round(this.time * 1000);
  }

  /** Starts `action` as a task at simulated `time` (now, if that is past). */
  at(time: number, action: () => Promise<unknown> | unknown): void {
    this.push(time, () => this.spawn(action));
  }

  /** Starts `action` as a task now. */
  spawn(action: () => Promise<unknown> | unknown): void {
    this.busy += 1;
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(action());
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      () => this.done(),
      (err: unknown) => {
        this.failure ??= err;
        this.done();
      },
    );
  }

  /** Suspends the calling task for `seconds` of simulated time. */
  sleep(seconds: number): Promise<void> {
    return new Promise((resolve) => {
      this.busy -= 1;
      this.push(this.time + Math.max(0, seconds), () => {
        this.busy += 1;
        resolve();
      });
      this.checkQuiet();
    });
  }

  /** The earliest simulated time anything is scheduled for, or null. */
  nextTime(): number | null {
    return this.events[0]?.at ?? null;
  }

  /**
   * Runs until nothing is scheduled, `stop()` holds, or simulated time would
   * pass `until`. A task that threw fails the run.
   */
  async run(options: { stop?: () => boolean; until?: number } = {}): Promise<void> {
    for (;;) {
      await this.quiet();
      this.rethrow();
      if (options.stop?.()) return;
      const next = this.events[0];
      if (!next || (options.until !== undefined && next.at > options.until)) {
        if (options.until !== undefined) this.time = Math.max(this.time, options.until);
        return;
      }
      this.time = Math.max(this.time, next.at);
      while (this.events[0] && this.events[0].at <= this.time) this.events.shift()!.fire();
    }
  }

  /** Drives the clock until `promise` settles (for a test awaiting Worker code that waits on the platform). */
  async settle<T>(promise: Promise<T>): Promise<T> {
    let settled = false;
    this.spawn(() => promise.finally(() => (settled = true)).catch(() => undefined));
    await this.run({ stop: () => settled });
    if (!settled) throw new Error("the simulation ran out of events before the awaited work finished");
    return promise;
  }

  /** Moves simulated time forward by `seconds`, running whatever falls due. */
  async advance(seconds: number): Promise<void> {
    await this.run({ until: this.time + seconds });
  }

  private push(time: number, fire: () => void): void {
    const event: Pending = { at: Math.max(time, this.time), seq: this.seq++, fire };
    // Binary insertion keeps (at, seq) order: ties run in the order they were scheduled.
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const e = this.events[mid]!;
      if (e.at < event.at || (e.at === event.at && e.seq < event.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.events.splice(lo, 0, event);
  }

  private done(): void {
    this.busy -= 1;
    this.checkQuiet();
  }

  private checkQuiet(): void {
    if (this.busy !== 0) return;
    const waiters = this.quietWaiters;
    this.quietWaiters = [];
    for (const wake of waiters) wake();
  }

  private quiet(): Promise<void> {
    if (this.busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.quietWaiters.push(resolve));
  }

  private rethrow(): void {
    if (this.failure === null) return;
    const err = this.failure;
    this.failure = null;
    throw err;
  }
}
