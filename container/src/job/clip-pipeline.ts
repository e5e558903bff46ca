/**
 * Renders a job's clips and uploads them as one pipeline:
 *
 * - renders run `concurrency` at a time, started in index order (each takes
 *   the next clip as soon as it is free);
 * - one upload lane sends clip 0, 1, 2... in index order, each as soon as it
 *   is rendered and the one before it is sent, so clip N uploads while later
 *   clips render instead of all uploads waiting for the last render.
 *
 * The first failure (a render or an upload) stops everything else at once:
 * running renders get the abort (their ffmpeg is killed), the upload in
 * flight is stopped, no new render starts. The pipeline only settles after
 * every render and upload it started has ended, so no ffmpeg outlives it and
 * the caller can remove the work directory right away; it then rejects with
 * that first failure (a cancel is the job signal's reason).
 */
export interface ClipPipelineOptions<R> {
  count: number;
  /** Renders at once, at least 1. */
  concurrency: number;
  /** The job's signal: aborting it stops the pipeline like a failure. */
  signal: AbortSignal;
  render(index: number, signal: AbortSignal): Promise<R>;
  upload(index: number, rendered: R, signal: AbortSignal): Promise<void>;
  /** Sent first in the upload lane, while the first clips render (the job's transcript). */
  uploadFirst?(signal: AbortSignal): Promise<void>;
  /** Told the indexes of the renders running, each time a render starts or ends. */
  onRendering?(running: number[]): void;
  /** Told when the last render ended and only uploads remain. */
  onRendersDone?(): void;
}

interface Slot<R> {
  promise: Promise<R>;
  resolve(value: R): void;
  reject(reason: unknown): void;
  settled: boolean;
}

function slot<R>(): Slot<R> {
  let resolve!: (value: R) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<R>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // The upload lane may stop before it awaits a slot: its rejection is not unhandled.
  promise.catch(() => undefined);
  const s: Slot<R> = {
    promise,
    settled: false,
    resolve: (value) => ((s.settled = true), resolve(value)),
    reject: (reason) => ((s.settled = true), reject(reason)),
  };
  return s;
}

export async function runClipPipeline<R>(opts: ClipPipelineOptions<R>): Promise<R[]> {
  const { count } = opts;
  const concurrency = Math.max(1, Math.floor(opts.concurrency));
  const stopAll = new AbortController();
  const signal = AbortSignal.any([opts.signal, stopAll.signal]);
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown): void => {
    if (failure) return;
    failure = { error };
    stopAll.abort(error);
  };
  const rendered = Array.from({ length: count }, () => slot<R>());
  const running = new Set<number>();
  let next = 0;

  const renderLane = async (): Promise<void> => {
    while (next < count && !signal.aborted) {
      const index = next;
      next += 1;
      running.add(index);
      opts.onRendering?.([...running].sort((a, b) => a - b));
      try {
        rendered[index]!.resolve(await opts.render(index, signal));
      } catch (error) {
        rendered[index]!.reject(error);
        fail(error);
        return;
      } finally {
        running.delete(index);
        if (!signal.aborted && running.size > 0) opts.onRendering?.([...running].sort((a, b) => a - b));
      }
    }
  };

  const renders = Promise.all(Array.from({ length: Math.min(concurrency, count) }, renderLane)).then(() => {
    // Clips never started (a failure or a cancel came first) settle too, so the upload lane ends.
    for (const s of rendered) if (!s.settled) s.reject(signal.reason ?? new Error("the clip was not rendered"));
    if (!signal.aborted) opts.onRendersDone?.();
  });

  const results: R[] = [];
  const uploads = (async () => {
    try {
      await opts.uploadFirst?.(signal);
    } catch (error) {
      fail(error);
      return;
    }
    for (let index = 0; index < count; index++) {
      try {
        const clip = await rendered[index]!.promise;
        signal.throwIfAborted();
        await opts.upload(index, clip, signal);
        results.push(clip);
      } catch (error) {
        fail(error);
        return;
      }
    }
  })();

  await Promise.all([renders, uploads]);
  if (opts.signal.aborted) throw opts.signal.reason;
  if (failure) throw failure.error;
  return results;
}
