import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./app-env.ts";

export const REQUEST_ID_HEADER = "Request-Id";

// An incoming id is echoed only when it is short and made of safe characters,
// so it can be logged and reflected without escaping concerns.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

function generateRequestId(): string {
  return "req_" + crypto.randomUUID().replaceAll("-", "");
}

/** Gives every request an id, available as c.get("requestId") and echoed as Request-Id. */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header(REQUEST_ID_HEADER);
  const id = incoming && SANE_REQUEST_ID.test(incoming) ? incoming : generateRequestId();
  c.set("requestId", id);
  c.header(REQUEST_ID_HEADER, id);
  await next();
  // Responses built outside the context (e.g. a raw Response) still get the header.
  if (!c.res.headers.has(REQUEST_ID_HEADER)) c.res.headers.set(REQUEST_ID_HEADER, id);
});
