/**
 * No answer leaves before its request's body has been read to the end.
 *
 * Locally the Worker runs behind wrangler dev's proxy, which streams each
 * request body on to the Worker as it arrives. When the Worker answers
 * without reading the body (a 413 decided from Content-Length, a cap reached
 * mid-stream, a 401 before any read), the runtime drops the connection with
 * the rest of the body unsent; the proxy's own fetch then fails and it
 * answers `503 text/plain "Your worker restarted mid-request"` in place of
 * the Worker's answer. Bodies that fit the socket buffers got through, so the
 * failure depended on size and timing. Reading what is left and dropping it
 * lets the Worker's own answer through on every path; on Cloudflare it only
 * costs the wait for bytes the client is sending anyway.
 *
 * Bounded: a body is read on for at most MAX_DRAIN_BYTES, and a body that
 * declares more is not read at all (Cloudflare's edge refuses request bodies
 * over 100 MB on its smallest plans before they reach a Worker).
 */
import { createMiddleware } from "hono/factory";
import { drainBody } from "../lib/drain-body.ts";
import type { AppEnv } from "./app-env.ts";

export { drainBody, MAX_DRAIN_BYTES } from "../lib/drain-body.ts";

function declaredLengthOf(request: Request): number | null {
  const declared = request.headers.get("content-length");
  return declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
}

/** Outermost middleware: after the answer is made, whatever the handlers left of the original body is read and dropped. */
export const drainUnreadBody = createMiddleware<AppEnv>(async (c, next) => {
  const original = c.req.raw;
  await next();
  await drainBody(original.body, declaredLengthOf(original));
});
