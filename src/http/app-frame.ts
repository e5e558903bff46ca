/**
 * What every Hono app the Worker serves shares, outermost first: the
 * unread-body drain, the request id, and one error path (problem+json for
 * every failure and for an unknown route). The public app (src/app.ts) and
 * the engine channel's own app (src/engine/channel-app.ts) are both framed
 * by it, so a callback answers alike whichever of them serves it.
 */
import type { Hono } from "hono";
import type { AppEnv } from "./app-env.ts";
import { handleError, handleNotFound } from "./problem.ts";
import { requestId } from "./request-id.ts";
import { drainUnreadBody } from "./unread-body.ts";

export function framed<A extends Hono<AppEnv>>(app: A): A {
  // First in, last out: whatever a handler left of the request body is read before the answer leaves (unread-body.ts).
  app.use("*", drainUnreadBody);
  app.use("*", requestId);
  app.onError(handleError);
  app.notFound(handleNotFound);
  return app;
}
