/**
 * GET /api/v1/openapi.json, generated from the routes the app mounts.
 *
 * How to add a route: declare it with `apiRoute()` (src/http/api-app.ts:
 * createRoute plus the problem codes it answers, `errors: [...]`), register it
 * on an `apiApp()` sub-app with `.openapi(route, handler)`, and mount that
 * sub-app in src/app.ts with `app.route(prefix, subApp)` before the app
 * serves its first request. That is all: OpenAPIHono copies the sub-app's
 * operations into the root app's registry when it is mounted, and this
 * document is built from that registry. Name a request or response schema
 * with `.openapi("Name")` to make it a component. A route registered with
 * plain `.get()`/`.post()` is served but left out of the document (the
 * openapi test fails for such a route under /api/v1).
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { VIDEO_TYPES } from "#contract";
import { apiApp, apiRoute, HEADER_COMPONENTS, PROBLEM_COMPONENT } from "../http/api-app.ts";
import type { AppEnv } from "../http/app-env.ts";
import { Problem } from "./openapi-schemas.ts";

type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;
type DocumentConfig = Parameters<OpenAPIHono["getOpenAPI31Document"]>[0];

export const OPENAPI_PATH = "/api/v1/openapi.json";

/** An SPDX-style reference (OpenAPI 3.1 `identifier`; the generator's types predate it). */
const LICENSE = { name: "Proprietary", identifier: "LicenseRef-clipjobs-terms-of-service" };

const DOCUMENT_INFO: DocumentConfig = {
  openapi: "3.1.0",
  info: {
    title: "clipjobs API",
    version: "1.0.0",
    description:
      `Long video in, short ready-to-post clips out. video_type is one of ${VIDEO_TYPES.join(", ")}. ` +
      "Every error is application/problem+json with a stable `code` (see /docs/errors). " +
      "Authenticated requests share a rolling 60-second window per account; see the RateLimit headers.",
    license: LICENSE,
  },
  servers: [{ url: "/", description: "This deployment" }],
  security: [{ bearerAuth: [] }],
};

const withSharedComponents = new WeakSet<OpenAPIHono<AppEnv>>();

/** What every operation refers to: the bearer scheme, the Problem schema, the response headers. */
function registerSharedComponents(root: OpenAPIHono<AppEnv>): void {
  if (withSharedComponents.has(root)) return;
  withSharedComponents.add(root);
  const registry = root.openAPIRegistry;
  registry.registerComponent("securitySchemes", "bearerAuth", { type: "http", scheme: "bearer", description: "An API key: ck_live_..." });
  registry.register(PROBLEM_COMPONENT, Problem);
  for (const [name, header] of Object.entries(HEADER_COMPONENTS)) registry.registerComponent("headers", name, header);
}

/** The OpenAPI 3.1 document of every documented route mounted on `root`. */
export function buildOpenApiDocument(root: OpenAPIHono<AppEnv>): OpenApiDocument {
  registerSharedComponents(root);
  return root.getOpenAPI31Document(DOCUMENT_INFO);
}

const OpenApiDocumentBody = z
  .object({ openapi: z.string(), info: z.object({ title: z.string(), version: z.string() }).catchall(z.unknown()), paths: z.record(z.string(), z.unknown()) })
  .catchall(z.unknown())
  .openapi("OpenApiDocument", { description: "An OpenAPI 3.1 document (this one)" });

const documentRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "This document",
  operationId: "getOpenApiDocument",
  responses: { 200: { description: "OpenAPI 3.1 document", content: { "application/json": { schema: OpenApiDocumentBody } } } },
}, {
  authenticated: false,
  errors: [],
});

/** The document route; `root` is the app whose mounted routes it describes (built on first request, then kept). */
export function openApiDocumentApp(root: OpenAPIHono<AppEnv>): OpenAPIHono<AppEnv> {
  let cached: z.output<typeof OpenApiDocumentBody> | null = null;
  return apiApp().openapi(documentRoute, (c) => {
    // Parsed once against its own schema: a generator bug fails loudly here, not in a client.
    cached ??= OpenApiDocumentBody.parse(buildOpenApiDocument(root));
    c.header("Cache-Control", "public, max-age=300");
    return c.json(cached, 200);
  });
}
