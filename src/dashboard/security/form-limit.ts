import { createMiddleware } from "hono/factory";
import { readBodyCapped } from "../../http/capped-body.ts";
import { AppError, problemBody } from "../../http/errors.ts";
import { DomainError } from "../../domain/errors.ts";
import type { DashboardEnv } from "../env.ts";

/**
 * Caps a form's body at `maxBytes`, with or without Content-Length: the body
 * is read (counting) into memory and handed on as read. Past the cap the
 * answer is the API's 413 problem+json (`payload_too_large`, or `code` when
 * given), not a page: a form the dashboard serves never comes near the cap.
 * The rest of a refused body is read and dropped before the answer leaves
 * (src/http/unread-body.ts).
 */
export function formLimit(maxBytes: number, code: "payload_too_large" | "logo_too_large" = "payload_too_large", detail?: string) {
  return createMiddleware<DashboardEnv>(async (c, next) => {
    if (!c.req.raw.body) return next();
    let bytes: Uint8Array;
    try {
      bytes = await readBodyCapped(c.req.raw, maxBytes);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== "payload_too_large") throw err;
      const problem = code === "payload_too_large" ? err : new AppError(code, detail ?? err.message);
      c.header("Content-Type", "application/problem+json");
      c.header("Cache-Control", "no-store");
      return c.body(JSON.stringify(problemBody(problem, c.get("requestId"))), 413);
    }
    c.req.raw = new Request(c.req.raw, { body: bytes });
    await next();
  });
}
