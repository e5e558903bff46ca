/**
 * An account's cookies files for the video platforms (docs/guides/platform-sources.md).
 * A platform that asks for a signed-in session (YouTube's "Sign in to confirm
 * you're not a bot") lets the download through with the cookies of a signed-in
 * browser. The body of PUT is the file itself, in the Netscape (cookies.txt)
 * format; only the platform's own cookies are kept, sealed, and handed to the
 * engine only for this account's jobs of that platform. No answer ever
 * contains the file: GET describes it.
 */
import { z } from "@hono/zod-openapi";
import { PLATFORM_IDS } from "#contract";
import { MAX_COOKIES_BYTES } from "../cookies/netscape.ts";
import { cookiesToJson, cookiesTooLarge, removeCookies, storeCookies } from "../cookies/service.ts";
import { findCookies, listCookies } from "../db/platform-cookies.ts";
import { apiApp, apiRoute, jsonContent } from "../http/api-app.ts";
import { mediaType, readBodyCapped } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { DomainError } from "../domain/errors.ts";
import { PlatformCookies, PlatformCookiesList } from "./openapi-schemas.ts";

const ACCEPTED_MEDIA_TYPES = new Set(["text/plain", "application/octet-stream"]);

const PlatformParam = z.object({
  platform: z.enum(PLATFORM_IDS).openapi({ param: { name: "platform", in: "path" }, example: "youtube" }),
});

const FileBody = z.string().openapi({ description: "The cookies file, Netscape (cookies.txt) format" });

const listRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "List the account's stored platform cookies (descriptions only)",
  operationId: "listPlatformCookies",
  responses: { 200: { description: "One entry per platform with a stored file", content: jsonContent(PlatformCookiesList) } },
}, { errors: [] });

const putRoute = apiRoute({
  method: "put",
  path: "/{platform}",
  summary: "Store or replace the account's cookies file for a platform",
  description:
    "The body is a cookies file in the Netscape (cookies.txt) format, as browser export extensions write it, at most 100 KiB. Only the cookies of the platform's own domains are kept; they are stored encrypted and used only for this account's jobs whose video is on that platform. No answer contains the file. 201 for the first file, 200 when it replaced one.",
  operationId: "putPlatformCookies",
  request: {
    params: PlatformParam,
    body: { required: true, content: { "text/plain": { schema: FileBody }, "application/octet-stream": { schema: FileBody } } },
  },
  responses: {
    200: { description: "Replaced", content: jsonContent(PlatformCookies) },
    201: { description: "Stored", content: jsonContent(PlatformCookies) },
  },
}, { errors: ["invalid_request", "invalid_cookies", "cookies_too_large", "unsupported_media_type"] });

const getRoute = apiRoute({
  method: "get",
  path: "/{platform}",
  summary: "Describe the account's cookies file for a platform (never the file itself)",
  operationId: "getPlatformCookies",
  request: { params: PlatformParam },
  responses: { 200: { description: "The stored file's description", content: jsonContent(PlatformCookies) } },
}, { errors: ["invalid_request", "not_found"] });

const deleteRoute = apiRoute({
  method: "delete",
  path: "/{platform}",
  summary: "Delete the account's cookies file for a platform",
  description: "Jobs that start afterwards download without it.",
  operationId: "deletePlatformCookies",
  request: { params: PlatformParam },
  responses: { 204: { description: "Deleted" } },
}, { errors: ["invalid_request", "not_found"] });

function noCookies(platform: string): AppError {
  return new AppError("not_found", `This account has no ${platform} cookies file: store one with PUT /api/v1/cookies/${platform}.`);
}

export const cookies = apiApp()
  .openapi(listRoute, async (c) => {
    const stored = await listCookies(c.env.DB, c.get("auth").accountId);
    return c.json({ cookies: stored.map(cookiesToJson) }, 200);
  })
  .openapi(putRoute, async (c) => {
    const { platform } = c.req.valid("param");
    if (!ACCEPTED_MEDIA_TYPES.has(mediaType(c.req.header("Content-Type")))) {
      throw new AppError("unsupported_media_type", "Send the cookies file as Content-Type: text/plain.");
    }
    let bytes: Uint8Array;
    try {
      bytes = await readBodyCapped(c.req.raw, MAX_COOKIES_BYTES);
    } catch (err) {
      if (err instanceof DomainError && err.code === "payload_too_large") throw cookiesTooLarge();
      throw err;
    }
    const { created, cookies: stored } = await storeCookies(c.env, c.get("auth").accountId, platform, bytes);
    return c.json(cookiesToJson(stored), created ? 201 : 200);
  })
  .openapi(getRoute, async (c) => {
    const { platform } = c.req.valid("param");
    const stored = await findCookies(c.env.DB, c.get("auth").accountId, platform);
    if (!stored) throw noCookies(platform);
    return c.json(cookiesToJson(stored), 200);
  })
  .openapi(deleteRoute, async (c) => {
    const { platform } = c.req.valid("param");
    if (!(await removeCookies(c.env, c.get("auth").accountId, platform))) throw noCookies(platform);
    return c.body(null, 204);
  });
