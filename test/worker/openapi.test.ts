import { SELF } from "cloudflare:test";
import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { buildOpenApiDocument } from "../../src/api/openapi.ts";
import { app } from "../../src/app.ts";
import { apiApp, apiRoute } from "../../src/http/api-app.ts";
import { ERROR_CODES } from "../../src/http/errors.ts";
import { handleError } from "../../src/http/problem.ts";
import { BASE } from "./helpers.ts";

interface Operation {
  operationId?: string;
  security?: unknown[];
  responses: Record<string, { content?: Record<string, unknown> }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { license?: { name: string } };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }>; schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> };
}

async function fetchDocument(): Promise<OpenApiDocument> {
  const res = await SELF.fetch(`${BASE}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toContain("application/json");
  return res.json<OpenApiDocument>();
}

/** Every public route the app serves, as OpenAPI "method path" strings. */
function servedRoutes(): string[] {
  const routes = new Set<string>();
  for (const route of app.routes) {
    if (route.method === "ALL") continue; // middleware
    const isPublic = route.path.startsWith("/api/v1/") || route.path === "/health";
    if (!isPublic) continue;
    const path = route.path.replace(/\/$/, "").replace(/:([A-Za-z_]+)/g, "{$1}");
    routes.add(`${route.method.toLowerCase()} ${path}`);
    // Hono answers HEAD from the GET route; the upload routes document it as the tus operation.
    if (route.method === "GET" && path.startsWith("/api/v1/uploads/")) routes.add(`head ${path}`);
  }
  return [...routes].sort();
}

describe("GET /api/v1/openapi.json", () => {
  it("is an unauthenticated OpenAPI 3.1 document with bearer security", async () => {
    const doc = await fetchDocument();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("documents every public route the app serves, and no route it does not", async () => {
    const doc = await fetchDocument();
    const documented = Object.entries(doc.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method} ${path}`))
      .sort();
    const served = servedRoutes();
    expect(served.length).toBeGreaterThanOrEqual(12);
    expect(documented).toEqual(served);
    for (const required of ["post /api/v1/jobs", "get /api/v1/jobs", "get /api/v1/jobs/{job_id}", "post /api/v1/jobs/{job_id}/cancel", "delete /api/v1/jobs/{job_id}"]) {
      expect(documented).toContain(required);
    }
  });

  it("describes errors as problem+json with their codes, and opens only the public routes", async () => {
    const doc = await fetchDocument();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        // tus discovery (OPTIONS on the upload routes) needs no key.
        const isPublic = path === "/health" || path === "/api/v1/openapi.json" || (method === "options" && path.startsWith("/api/v1/uploads"));
        expect(operation.security).toEqual(isPublic ? [] : undefined);
        if (!isPublic) expect(operation.responses["401"]?.content?.["application/problem+json"]).toBeDefined();
        if (!isPublic) expect(operation.responses["429"]).toBeDefined();
      }
    }
    const problem = JSON.stringify(doc.components.schemas.Problem);
    for (const code of Object.keys(ERROR_CODES)) expect(problem).toContain(code);
  });

  it("gives every operation a unique operationId, a 4XX answer and a license for the whole", async () => {
    const doc = await fetchDocument();
    expect(doc.info.license?.name).toBeTruthy();
    const ids = Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const methods of Object.values(doc.paths)) {
      for (const op of Object.values(methods)) expect(Object.keys(op.responses).some((status) => status.startsWith("4"))).toBe(true);
    }
  });

  it("documents request bodies as sent, inline: a field with a default is optional", async () => {
    const doc = await fetchDocument();
    const bodyOf = (method: string, path: string) => {
      const op = doc.paths[path]![method] as unknown as { requestBody: { required: boolean; content: Record<string, { schema: { required?: string[]; properties?: Record<string, unknown>; $ref?: string } }> } };
      expect(op.requestBody.required).toBe(true);
      return op.requestBody.content["application/json"]!.schema;
    };
    const clipConfig = bodyOf("put", "/api/v1/configs/{name}");
    // Inline, not a $ref: openapi-typescript reads defaults as optional only under requestBody.
    expect(clipConfig.$ref).toBeUndefined();
    // Every member of the contract's ClipConfig, each with a default.
    expect(Object.keys(clipConfig.properties ?? {}).sort()).toEqual(Object.keys(ClipConfig.shape).sort());
    expect(clipConfig.required ?? []).toEqual([]);
    // video_url or upload_id: exactly one, checked by the route (the document lists both as optional).
    expect(bodyOf("post", "/api/v1/jobs").required).toEqual(["video_type"]);
    const listParams = (doc.paths["/api/v1/jobs"]!.get as unknown as { parameters: { name: string; required: boolean }[] }).parameters;
    expect(listParams.every((param) => !param.required)).toBe(true);
  });
});

describe("a new apiApp() sub-app", () => {
  const Body = z.object({ name: z.string().min(1), size: z.number().int().default(3) });
  const Widget = z.object({ name: z.string(), size: z.number().int() }).openapi("Widget");
  function rootWithWidgets() {
    const widgets = apiApp().openapi(
      apiRoute(
        {
          method: "post",
          path: "/{widget_id}",
          summary: "Make a widget",
          operationId: "makeWidget",
          request: { params: z.object({ widget_id: z.string() }), body: { required: true, content: { "application/json": { schema: Body } } } },
          responses: { 201: { description: "Made", content: { "application/json": { schema: Widget } } } },
        },
        { errors: ["invalid_request", "not_found"] },
      ),
      (c) => c.json(c.req.valid("json"), 201),
    );
    const root = apiApp();
    root.onError(handleError);
    root.route("/api/v1/widgets", widgets);
    return root;
  }

  it("appears in the document once mounted with app.route(), with its problem responses", () => {
    const doc = buildOpenApiDocument(rootWithWidgets()) as unknown as OpenApiDocument;
    const op = doc.paths["/api/v1/widgets/{widget_id}"]?.post;
    expect(op?.operationId).toBe("makeWidget");
    expect(Object.keys(op?.responses ?? {}).sort()).toEqual(["201", "400", "401", "404", "429", "500", "503"]);
    expect(doc.components.schemas.Widget?.required).toEqual(["name", "size"]);
  });

  it("answers a validation failure with the project's problem+json 400", async () => {
    const res = await rootWithWidgets().request("/api/v1/widgets/w1", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ size: "big" }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("Content-Type")).toContain("application/problem+json");
    const problem = await res.json<{ code: string; errors: { path: string }[] }>();
    expect(problem.code).toBe("invalid_request");
    expect(problem.errors.map((e) => e.path).sort()).toEqual(["name", "size"]);
  });
});

describe("GET /health", () => {
  it("answers without a key", async () => {
    const res = await SELF.fetch(`${BASE}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, service: "clipjobs" });
    expect(res.headers.get("RateLimit")).toBeNull();
  });
});
