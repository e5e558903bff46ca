import { drainBody } from "../lib/drain-body.ts";

/**
 * Lets go of a refused PATCH body that was handed to the upload's Durable
 * Object (the Worker answers what it can refuse on the headers alone before
 * handing the body over; the object checks again and may still refuse).
 * Canceled, it leaves the client's connection unusable: a client that keeps
 * the connection alive (Node's HTTP agent, so tus-js-client and the CLI)
 * sends its next request (HEAD, to resume) and the runtime never answers it
 * (seen on the local stack: the CLI's resume hung about two minutes). So the
 * rest of the body is read and dropped, up to the same bound as any unread
 * body (src/http/unread-body.ts); only a body past it is canceled.
 */
export function discardBody(body: ReadableStream<Uint8Array>, declaredLength: number | null): Promise<void> {
  return drainBody(body, declaredLength);
}
