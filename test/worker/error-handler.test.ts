import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/http/app-env.ts";
import { jsonBodyGuard } from "../../src/http/body-guard.ts";
import { readJsonBody } from "../../src/http/json-body.ts";
import { handleError, handleNotFound } from "../../src/http/problem.ts";
import { requestId } from "../../src/http/request-id.ts";
import { expectProblem } from "./helpers.ts";

/** A small app wired exactly like the Worker's, with routes that fail on purpose. */
function failingApp() {
  const app = new Hono<AppEnv>();
  app.use("*", requestId, jsonBodyGuard);
  app.onError(handleError);
  app.notFound(handleNotFound);
  app.get("/bug", () => {
    throw new TypeError("secret internals at /work/main/src/thing.ts:12:3");
  });
  app.get("/http-exception", () => {
    throw new HTTPException(400, { message: "Bad thing from a Hono helper" });
  });
  app.post("/echo", async (c) => c.json({ got: await readJsonBody(c) }));
  // What a Durable Object call throws while the platform resets or sheds the object (its documented flags).
  app.get("/object-reset", () => {
    throw Object.assign(new Error("Durable Object reset because its code was updated."), { retryable: true });
  });
  app.get("/object-overloaded", () => {
    throw Object.assign(new Error("Durable Object is overloaded. Too many requests queued."), { overloaded: true, retryable: false });
  });
  app.get("/object-own-error", () => {
    throw Object.assign(new Error("thrown by the object's own code"), { remote: true });
  });
  return app;
}

describe("unexpected errors", () => {
  it("answers 500 internal_error without any detail of the failure", async () => {
    const res = await failingApp().request("/bug");
    const text = await res.clone().text();
    expect(text).not.toContain("secret internals");
    expect(text).not.toContain("thing.ts");
    const problem = await expectProblem(res, 500, "internal_error");
    expect(problem.request_id).toMatch(/^req_/);
  });

  it("answers 503 service_unavailable with Retry-After for a platform error the docs mark retryable or overloaded", async () => {
    const app = failingApp();
    const reset = await app.request("/object-reset");
    expect(reset.headers.get("Retry-After")).toBe("2");
    const resetProblem = await expectProblem(reset, 503, "service_unavailable");
    expect(JSON.stringify(resetProblem)).not.toContain("code was updated");
    const overloaded = await app.request("/object-overloaded");
    expect(overloaded.headers.get("Retry-After")).toBe("10");
    await expectProblem(overloaded, 503, "service_unavailable");
    // An error of the object's own code is a bug like any other.
    await expectProblem(await app.request("/object-own-error"), 500, "internal_error");
  });

  it("maps Hono's HTTPException for a client mistake to invalid_request", async () => {
    await expectProblem(await failingApp().request("/http-exception"), 400, "invalid_request");
  });

  it("reads JSON bodies, turning malformed JSON into invalid_request", async () => {
    const app = failingApp();
    const ok = await app.request("/echo", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"a":[1,2]}' });
    expect(await ok.json()).toEqual({ got: { a: [1, 2] } });
    const bad = await app.request("/echo", { method: "POST", headers: { "Content-Type": "application/json" }, body: "" });
    await expectProblem(bad, 400, "invalid_request");
    // A form feed is not JSON whitespace (RFC 8259): such a body is malformed, not absent (a fuzz finding).
    const formFeed = await app.request("/echo", { method: "POST", headers: { "Content-Type": "application/json" }, body: "\f" });
    await expectProblem(formFeed, 400, "invalid_request");
  });
});
