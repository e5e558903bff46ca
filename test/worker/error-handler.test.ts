import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/http/app-env";
import { jsonBodyGuard } from "../../src/http/body-guard";
import { readJsonBody } from "../../src/http/json-body";
import { handleError, handleNotFound } from "../../src/http/problem";
import { requestId } from "../../src/http/request-id";
import { expectProblem } from "./helpers";

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

  it("maps Hono's HTTPException for a client mistake to invalid_request", async () => {
    await expectProblem(await failingApp().request("/http-exception"), 400, "invalid_request");
  });

  it("reads JSON bodies, turning malformed JSON into invalid_request", async () => {
    const app = failingApp();
    const ok = await app.request("/echo", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"a":[1,2]}' });
    expect(await ok.json()).toEqual({ got: { a: [1, 2] } });
    const bad = await app.request("/echo", { method: "POST", headers: { "Content-Type": "application/json" }, body: "" });
    await expectProblem(bad, 400, "invalid_request");
  });
});
