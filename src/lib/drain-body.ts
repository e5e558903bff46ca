/** Reading a body to its end without keeping it: what lets a keep-alive connection carry the next request. */

/** The most of an unread body read and dropped before answering. */
export const MAX_DRAIN_BYTES = 100 * 1024 * 1024;

/** Reads the rest of `body` and drops it (up to MAX_DRAIN_BYTES); a locked, used or failing body is left alone. */
export async function drainBody(body: ReadableStream<Uint8Array> | null, declaredLength: number | null): Promise<void> {
  if (!body || body.locked) return;
  if (declaredLength !== null && declaredLength > MAX_DRAIN_BYTES) {
    await body.cancel().catch(() => undefined);
    return;
  }
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = body.getReader();
  } catch {
    return;
  }
  try {
    for (let read = 0; read <= MAX_DRAIN_BYTES; ) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel().catch(() => undefined);
  } catch {
    // The client went away: nothing left to read.
  } finally {
    reader.releaseLock();
  }
}
