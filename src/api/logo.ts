/**
 * The account's logo: uploaded once, placed on clips by the
 * configurations that ask for it (logo_position, logo_size, logo_opacity).
 * The body of PUT is the image itself (PNG or JPEG, at most 1 MiB and 1024
 * pixels a side), not JSON; it is stored privately and never published.
 */
import { z } from "@hono/zod-openapi";
import { MAX_LOGO_BYTES } from "#contract";
import { findLogo } from "../db/logos.ts";
import { apiApp, apiRoute, jsonContent } from "../http/api-app.ts";
import { mediaType, readBodyCapped } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { DomainError } from "../domain/errors.ts";
import { logoToJson, logoTooLarge, readLogo, removeLogo, storeLogo } from "../logos/service.ts";
import { Logo } from "./openapi-schemas.ts";

/** The body is judged by its bytes; the declared type only has to say it is an image (or bytes). */
const ACCEPTED_MEDIA_TYPES = new Set(["image/png", "image/jpeg", "application/octet-stream"]);

const ImageBody = z.string().openapi({ format: "binary" });

const putRoute = apiRoute({
  method: "put",
  path: "/",
  summary: "Upload or replace the account's logo",
  description:
    "The body is the image: a PNG or JPEG (judged by its bytes), at most 1 MiB and 1024 pixels on each side. Stored privately: clips show it where a configuration places it. 201 for the first logo, 200 when it replaced one. A larger body, with or without Content-Length, is 413 logo_too_large and the logo on file (if any) stays.",
  operationId: "putLogo",
  request: {
    body: {
      required: true,
      content: { "image/png": { schema: ImageBody }, "image/jpeg": { schema: ImageBody }, "application/octet-stream": { schema: ImageBody } },
    },
  },
  responses: {
    200: { description: "Replaced", content: jsonContent(Logo) },
    201: { description: "Stored", content: jsonContent(Logo) },
  },
}, {
  errors: ["invalid_logo", "logo_too_large", "unsupported_media_type"],
});

const getRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "Describe the account's logo",
  operationId: "getLogo",
  responses: { 200: { description: "The logo", content: jsonContent(Logo) } },
}, {
  errors: ["not_found"],
});

const imageRoute = apiRoute({
  method: "get",
  path: "/image",
  summary: "Download the account's logo image",
  operationId: "getLogoImage",
  responses: {
    200: { description: "The image as uploaded", content: { "image/png": { schema: ImageBody }, "image/jpeg": { schema: ImageBody } } },
  },
}, {
  errors: ["not_found"],
});

const deleteRoute = apiRoute({
  method: "delete",
  path: "/",
  summary: "Delete the account's logo",
  description: "Jobs submitted later with a configuration that places a logo answer 422 logo_not_uploaded.",
  operationId: "deleteLogo",
  responses: { 204: { description: "Deleted" } },
}, {
  errors: ["not_found"],
});

function noLogo(): AppError {
  return new AppError("not_found", "This account has no logo: upload one with PUT /api/v1/logo.");
}

export const logo = apiApp()
  .openapi(putRoute, async (c) => {
    if (!ACCEPTED_MEDIA_TYPES.has(mediaType(c.req.header("Content-Type")))) {
      throw new AppError("unsupported_media_type", "Send the logo as Content-Type: image/png or image/jpeg.");
    }
    let bytes: Uint8Array;
    try {
      bytes = await readBodyCapped(c.req.raw, MAX_LOGO_BYTES);
    } catch (err) {
      if (err instanceof DomainError && err.code === "payload_too_large") throw logoTooLarge();
      throw err;
    }
    const { created, logo: saved } = await storeLogo(c.env, c.get("auth").accountId, bytes);
    return c.json(logoToJson(saved), created ? 201 : 200);
  })
  .openapi(getRoute, async (c) => {
    const saved = await findLogo(c.env.DB, c.get("auth").accountId);
    if (!saved) throw noLogo();
    return c.json(logoToJson(saved), 200);
  })
  .openapi(imageRoute, async (c) => {
    const found = await readLogo(c.env, c.get("auth").accountId);
    if (!found) throw noLogo();
    return c.body(found.body, 200, {
      "Content-Type": found.contentType,
      "Cache-Control": "private, no-store",
      ETag: `"${found.logo.sha256}"`,
      "X-Content-Type-Options": "nosniff",
    });
  })
  .openapi(deleteRoute, async (c) => {
    if (!(await removeLogo(c.env, c.get("auth").accountId))) throw noLogo();
    return c.body(null, 204);
  });
