import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./app-env.ts";
import { readBodyCapped } from "./capped-body.ts";
import { AppError } from "./errors.ts";

/** SPEC section 5: JSON bodies of at most 16 KiB. */
export const MAX_JSON_BODY_BYTES = 16 * 1024;

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const mediaType = value.split(";", 1)[0]!.trim().toLowerCase();
  return mediaType === "application/json";
}

/**
 * For POST/PUT/PATCH: 415 unless the body is declared JSON, 413 over the size
 * limit, 400 invalid_request for malformed JSON. The checked bytes replace the
 * request body and the Content-Type is made canonical, so later readers (the
 * zod validators) see exactly what passed.
 * A bodyless POST (e.g. cancel) passes through untouched.
 */
/**
 * A body of JSON whitespace only (space, tab, LF, CR: RFC 8259) counts as no
 * body; anything else, a form feed or a no-break space included, must parse.
 */
export function isBlankJson(text: string): boolean {
  return /^[ \t\n\r]*$/.test(text);
}

export const jsonBodyGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (!METHODS_WITH_BODY.has(c.req.method)) return next();
  const raw = c.req.raw;
  const declaredLength = raw.headers.get("content-length");
  const hasBody = raw.body !== null && declaredLength !== "0";
  if (!raw.headers.has("content-type")) {
    if (!hasBody) return next();
    // A body stream without a declared length may still be empty (e.g. a zero-byte chunked body): that is no body.
    if (declaredLength === null && raw.body && (await readBodyCapped(raw, MAX_JSON_BODY_BYTES)).byteLength === 0) {
      c.req.raw = new Request(raw, { body: null });
      return next();
    }
  }
  if (!isJsonContentType(raw.headers.get("content-type") ?? undefined)) {
    throw new AppError("unsupported_media_type", "Request bodies must be sent as Content-Type: application/json.");
  }
  const bytes = await readBodyCapped(raw, MAX_JSON_BODY_BYTES);
  const text = new TextDecoder().decode(bytes);
  if (!isBlankJson(text)) {
    try {
      JSON.parse(text);
    } catch {
      throw new AppError("invalid_request", "The request body is not valid JSON.");
    }
  }
  // The media type is rewritten in its canonical form, so the route validators after this guard
  // (stricter about spacing and parameters) read exactly the body the guard accepted.
  const headers = new Headers(raw.headers);
  headers.set("Content-Type", "application/json");
  c.req.raw = new Request(raw, { body: bytes, headers });
  await next();
});
