/**
 * The schedule of the Workers AI stage: chunks are prepared one at
 * a time and in order (an ffmpeg extraction), and sent up to `concurrency` at
 * a time, so the next chunk is extracted while earlier ones are being
 * transcribed. A prepared chunk waits for a free lane before the one after it
 * is prepared, so at most concurrency + 1 prepared chunks exist at once (those
 * in flight and the next), and each is discarded (its file deleted) as soon
 * as its send settled.
 *
 * Stopping (`halt`, or the job's signal): the preparation under way is
 * stopped, sends in flight are aborted through `stop`, none starts. `run`
 * settles only once every preparation and send it started has settled and
 * every prepared chunk was discarded, whatever ended it: nothing of the stage
 * outlives it (the job's work directory may be removed right after).
 */

export interface LanePlan<T> {
  count: number;
  /** Sends in flight at once (at least 1). */
  concurrency: number;
  /** Prepares chunk `index`; null when it could not be (the caller has halted with its reason). */
  prepare(index: number): Promise<T | null>;
  /** Sends a prepared chunk; what the answer means is the caller's (it never needs to reject). */
  send(index: number, prepared: T): Promise<void>;
  /** Called once for every prepared chunk: after its send settled, or when it will not be sent. */
  discard(prepared: T): Promise<void>;
}

export class ChunkLanes {
  private readonly halted = new AbortController();
  /** Aborted by `halt` or by the job's signal: every preparation and send listens to it. */
  readonly stop: AbortSignal;

  constructor(jobSignal: AbortSignal) {
    this.stop = AbortSignal.any([jobSignal, this.halted.signal]);
  }

  halt(): void {
    if (!this.halted.signal.aborted) this.halted.abort(new Error("the speech stage ended"));
  }

  async run<T>(plan: LanePlan<T>): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const stopped = new Promise<void>((resolve) => {
      if (this.stop.aborted) resolve();
      else this.stop.addEventListener("abort", () => resolve(), { once: true });
    });
    let failure: { error: unknown } | null = null;
    const fail = (error: unknown) => {
      // An error caused by the stop itself (an aborted extraction) is not a failure of its own.
      if (!this.stop.aborted) failure ??= { error };
      this.halt();
    };
    const discard = (prepared: T) => plan.discard(prepared).catch(fail);
    const launch = (index: number, prepared: T) => {
      const sending: Promise<void> = plan
        .send(index, prepared)
        .catch(fail)
        .then(() => discard(prepared))
        .finally(() => inFlight.delete(sending));
      inFlight.add(sending);
    };
    try {
      for (let index = 0; index < plan.count && !this.stop.aborted; index += 1) {
        const prepared = await plan.prepare(index);
        if (prepared === null) {
          this.halt();
          break;
        }
        while (inFlight.size >= Math.max(1, plan.concurrency) && !this.stop.aborted) await Promise.race([...inFlight, stopped]);
        if (this.stop.aborted) {
          await discard(prepared);
          break;
        }
        launch(index, prepared);
      }
    } catch (error) {
      fail(error);
    } finally {
      await Promise.all(inFlight);
    }
    if (failure) throw failure.error;
  }
}
