/**
 * The bugs the fuzz suites found, kept as fixed examples so they stay fixed
 * even on a run whose random cases miss them.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";
import { send } from "./fuzz/invoke.ts";

let account: TestAccount;
let engine: FakeEngine;
beforeAll(async () => {
  engine = new FakeEngine();
  engine.install();
  account = await createAccount("unmetered");
});

describe("fuzz findings", () => {
  it("/cdn answers 404, not 500, for a malformed escape and for a key longer than R2 allows", async () => {
    for (const path of ["/cdn/%25E0%A4%A", `/cdn/${"a".repeat(1100)}`]) {
      const res = await send(new Request(`http://worker.test${path}`));
      expect(res.status, res.text).toBe(404);
    }
  });

  it("a bodyless POST without Content-Type passes the body guard (cancel needs no body)", async () => {
    const { jobId } = await startJob(account, engine);
    const res = await api(account, `/api/v1/jobs/${jobId}/cancel`, { method: "POST", body: new Uint8Array(0), headers: { "Content-Length": "0" } });
    expect(res.status).toBe(200);
  });

  it("a PUT of a configuration without a JSON body is refused instead of resetting it to defaults", async () => {
    const saved = await api(account, "/api/v1/configs/square", { method: "PUT", body: JSON.stringify({ aspect_ratio: "1:1" }) });
    expect(saved.status).toBe(201);
    const empty = await api(account, "/api/v1/configs/square", { method: "PUT", body: new Uint8Array(0), headers: { "Content-Length": "0" } });
    await expectProblem(empty, 400, "invalid_request");
    const current = await api(account, "/api/v1/configs/square");
    expect(await current.json()).toMatchObject({ aspect_ratio: "1:1" });
  });

  it("a clip index must be decimal digits: ' ' and '0x1' are not indexes", async () => {
    const { jobId } = await startJob(account, engine);
    const token = engine.starts(jobId).at(-1)!.token;
    for (const index of ["%20", "0x1", "1e1"]) {
      const res = await send(
        new Request(`http://worker.test/internal/v1/jobs/${jobId}/clips/${index}`, {
          method: "PUT",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "video/mp4", "Content-Length": "3" },
          body: new Uint8Array([1, 2, 3]),
        }),
      );
      expect(res.status, `${index}: ${res.text}`).toBe(400);
    }
    expect((await env.UPLOADS.list({ prefix: `staging/${jobId}/` })).objects).toEqual([]);
  });
});
