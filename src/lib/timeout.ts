/**
 * A bound on one outside call (an engine exchange, a Workers AI run): `run`
 * gets a signal that aborts after `timeoutMs`, and the returned promise
 * rejects then even if `run` ignores the signal. One timer, cleared as soon
 * as `run` settles: an AbortSignal.timeout would stay armed for its whole
 * length after the call ended, and workerd caps the timers active in one
 * context at 10,000 (the fleet simulation, which starts every job in one
 * context, reached it and every start failed).
 */
export async function withTimeout<T>(timeoutMs: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  // undefined, not null: the module also runs in Node (the engine's suites), whose clearTimeout takes no null.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`no answer within ${timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([run(controller.signal), expired]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
