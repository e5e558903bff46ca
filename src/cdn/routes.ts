/**
 * The bucket served under /cdn/ for local development (production serves the
 * same keys from the R2 custom domain at CDN_URL). Supports what a browser
 * <video> needs to seek: Range/206, plus ETag validation and the clips'
 * caching policy (CLIP_CACHE_CONTROL: short, so a DELETE takes effect).
 * Mounted behind localCdnOnly: only where CDN_URL names this Worker's /cdn.
 */
import { Hono, type Context } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { AppError } from "../http/errors.ts";
import { CLIP_CACHE_CONTROL } from "../jobs/storage.ts";
import { parseRange } from "./range.ts";

function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === "*") return true;
  const bare = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => bare(tag) === bare(etag));
}

function baseHeaders(object: R2Object): Headers {
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  if (!headers.has("Content-Type")) headers.set("Content-Type", "application/octet-stream");
  // The policy of today, not the one stored with an older object.
  headers.set("Cache-Control", CLIP_CACHE_CONTROL);
  headers.set("ETag", object.httpEtag);
  headers.set("Last-Modified", object.uploaded.toUTCString());
  headers.set("Accept-Ranges", "bytes");
  return headers;
}

/** R2 refuses longer keys with an error; such a path simply names no object. */
const MAX_KEY_BYTES = 1024;

/** The object key a /cdn path names, or null when it cannot name one (malformed escapes, dot segments, too long). */
function objectKey(path: string): string | null {
  let key: string;
  try {
    key = decodeURIComponent(path.replace(/^\/cdn\//, ""));
  } catch {
    return null;
  }
  if (key === "" || key.split("/").some((part) => part === ".." || part === "")) return null;
  if (new TextEncoder().encode(key).byteLength > MAX_KEY_BYTES) return null;
  return key;
}

async function serve(c: Context<AppEnv>, withBody: boolean): Promise<Response> {
  const notFound = () => new AppError("not_found", `No object at ${c.req.path}.`);
  const key = objectKey(c.req.path);
  if (key === null) throw notFound();
  const head = await c.env.CLIPS.head(key);
  if (!head) throw notFound();
  const headers = baseHeaders(head);
  const requestId = c.get("requestId");
  if (requestId) headers.set("Request-Id", requestId);

  const ifNoneMatch = c.req.header("If-None-Match");
  if (ifNoneMatch && etagMatches(ifNoneMatch, head.httpEtag)) {
    headers.delete("Content-Type");
    return new Response(null, { status: 304, headers });
  }

  // If-Range: a range only applies while the client's copy is current.
  const ifRange = c.req.header("If-Range");
  const rangeHeader = ifRange && ifRange.trim() !== head.httpEtag ? undefined : c.req.header("Range");
  const range = parseRange(rangeHeader, head.size);
  if (range.kind === "unsatisfiable") {
    throw new AppError("range_not_satisfiable", `The object has ${head.size} bytes; the requested range is outside it.`, {
      headers: { "Content-Range": `bytes */${head.size}` },
    });
  }
  if (range.kind === "range") {
    headers.set("Content-Range", `bytes ${range.offset}-${range.offset + range.length - 1}/${head.size}`);
    headers.set("Content-Length", String(range.length));
    if (!withBody) return new Response(null, { status: 206, headers });
    const part = await c.env.CLIPS.get(key, { range: { offset: range.offset, length: range.length } });
    if (!part) throw notFound();
    return new Response(part.body, { status: 206, headers });
  }
  headers.set("Content-Length", String(head.size));
  if (!withBody) return new Response(null, { status: 200, headers });
  const object = await c.env.CLIPS.get(key);
  if (!object) throw notFound();
  return new Response(object.body, { status: 200, headers });
}

// Hono answers HEAD with the GET route minus the body; serve() then skips reading the object.
export const cdn = new Hono<AppEnv>().get("/*", (c) => serve(c, c.req.method !== "HEAD"));
