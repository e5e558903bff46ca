import { MAX_PATCH_BYTES } from "./limits";

/**
 * Lets go of a refused PATCH body that was handed to the upload's Durable
 * Object (the Worker answers what it can refuse on the headers alone before
 * handing the body over; the object checks again and may still refuse). Canceled,
 * it leaves the client's connection unusable: a client that keeps the
 * connection alive (Node's HTTP agent, so tus-js-client and the CLI) sends its
 * next request (HEAD, to resume) and the runtime never answers it (seen on the
 * local stack: the CLI's resume hung about two minutes). So a body of a
 * declared, allowed size is read to its end and dropped, and only a body past
 * the PATCH cap (or of no declared size) is canceled.
 */
export async function discardBody(body: ReadableStream<Uint8Array>, declaredLength: number | null): Promise<void> {
  if (declaredLength === null || declaredLength > MAX_PATCH_BYTES) {
    await body.cancel().catch(() => undefined);
    return;
  }
  const reader = body.getReader();
  try {
    for (let read = 0; read <= declaredLength; ) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    // More than it declared: not a body worth reading on.
    await reader.cancel().catch(() => undefined);
  } catch {
    // The connection went: nothing left to read.
  } finally {
    reader.releaseLock();
  }
}
