import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { ERROR_CODES } from "../../src/http/errors";
import { BASE } from "./helpers";

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, { content?: Record<string, unknown> }> }>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }>; schemas: Record<string, unknown> };
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
    expect(served.length).toBeGreaterThanOrEqual(8);
    const jobsRoutesMounted = served.some((route) => route.includes("/api/v1/jobs"));
    // The jobs routes are documented from SPEC section 4 whether or not they are mounted yet.
    expect(documented.filter((route) => jobsRoutesMounted || !route.includes("/api/v1/jobs"))).toEqual(served);
    for (const required of ["post /api/v1/jobs", "get /api/v1/jobs", "get /api/v1/jobs/{job_id}", "post /api/v1/jobs/{job_id}/cancel", "delete /api/v1/jobs/{job_id}"]) {
      expect(documented).toContain(required);
    }
  });

  it("describes errors as problem+json with their codes, and opens only the public routes", async () => {
    const doc = await fetchDocument();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const operation of Object.values(methods)) {
        const isPublic = path === "/health" || path === "/api/v1/openapi.json";
        expect(operation.security).toEqual(isPublic ? [] : undefined);
        if (!isPublic) expect(operation.responses["401"]?.content?.["application/problem+json"]).toBeDefined();
        if (!isPublic) expect(operation.responses["429"]).toBeDefined();
      }
    }
    const problem = JSON.stringify(doc.components.schemas.Problem);
    for (const code of Object.keys(ERROR_CODES)) expect(problem).toContain(code);
    const clipConfig = doc.components.schemas.ClipConfig as { properties: Record<string, unknown> };
    expect(Object.keys(clipConfig.properties).sort()).toEqual([
      "aspect_ratio",
      "caption_position",
      "caption_style",
      "captions",
      "max_clip_seconds",
      "max_clips",
      "min_clip_seconds",
      "reframe",
      "resolution",
    ]);
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
