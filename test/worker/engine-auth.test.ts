/** The engine channel accepts only the per-job token the Worker signed. */
import { env, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { ClipEngine } from "../../src/engine/container";
import { signEngineToken, verifyEngineToken } from "../../src/engine/token";
import { expectAck, FakeEngine } from "./engine-stub";
import { createAccount, expectProblem } from "./helpers";
import { getJob, startJob } from "./jobs-helpers";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

describe("engine tokens", () => {
  const secret = "unit-test-secret-0123456789";

  it("verify a fresh token for its own job only", async () => {
    const token = await signEngineToken(secret, "job_AAAAAAAAAAAAAAAAAAAA", 60);
    expect(await verifyEngineToken(secret, token, "job_AAAAAAAAAAAAAAAAAAAA")).toBe(true);
    expect(await verifyEngineToken(secret, token, "job_BBBBBBBBBBBBBBBBBBBB")).toBe(false);
    expect(await verifyEngineToken("another-secret-0123456789", token, "job_AAAAAAAAAAAAAAAAAAAA")).toBe(false);
  });

  it("expire", async () => {
    const issuedAt = Date.now() - 120_000;
    const token = await signEngineToken(secret, "job_AAAAAAAAAAAAAAAAAAAA", 60, issuedAt);
    expect(await verifyEngineToken(secret, token, "job_AAAAAAAAAAAAAAAAAAAA")).toBe(false);
    expect(await verifyEngineToken(secret, token, "job_AAAAAAAAAAAAAAAAAAAA", issuedAt + 30_000)).toBe(true);
  });

  it("reject a payload edited after signing", async () => {
    const token = await signEngineToken(secret, "job_AAAAAAAAAAAAAAAAAAAA", 60);
    const [, signature] = token.split(".");
    const forged = btoa(JSON.stringify({ job_id: "job_BBBBBBBBBBBBBBBBBBBB", exp: 9999999999 }))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replaceAll("=", "");
    expect(await verifyEngineToken(secret, `${forged}.${signature}`, "job_BBBBBBBBBBBBBBBBBBBB")).toBe(false);
    expect(await verifyEngineToken(secret, "garbage", "job_AAAAAAAAAAAAAAAAAAAA")).toBe(false);
  });
});

describe("internal routes", () => {
  it("answer 401 for a missing, malformed, foreign, expired token, an API key or the admin token", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    const other = await startJob(await createAccount(), engine);
    const expired = await signEngineToken(env.ENGINE_SECRET, client.jobId, 60, Date.now() - 3_600_000);
    const wrongSecret = await signEngineToken("not-the-engine-secret-0123", client.jobId, 600);
    const report = { progress: 5, step: "Downloading video" };

    const noToken = await SELF.fetch(client.url("progress"), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(report),
    });
    await expectProblem(noToken, 401, "unauthorized");
    for (const token of [
      "not-a-token",
      expired,
      wrongSecret,
      account.apiKey,
      env.ADMIN_TOKEN,
    ]) {
      await expectProblem(await client.postJson("progress", report, token), 401, "unauthorized");
    }
    // The other job's own token opens its job, and only that one.
    await expectAck(await other.progress(report));
    const foreign = engine.starts(other.jobId).at(-1)!.token;
    await expectProblem(await client.postJson("progress", report, foreign), 401, "unauthorized");
    await expectProblem(
      await client.send("clips/0", { method: "PUT", body: new Uint8Array(8), headers: { "Content-Length": "8" }, token: foreign }),
      401,
      "unauthorized",
    );
    await expectProblem(await client.postJson("complete", {}, foreign), 401, "unauthorized");
    // Nothing happened to the job.
    expect((await getJob(account, client.jobId)).progress).toBe(0);
  });

  it("is not reachable with an API key on the public API either", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    // The internal prefix is not under /api/v1: an API key there is just a bad token.
    await expectProblem(await client.postJson("fail", { code: "internal_error", message: "x" }, account.apiKey), 401, "unauthorized");
    expect((await getJob(account, client.jobId)).status).toBe("processing");
  });
});

describe("the Container's outbound handler", () => {
  it("hands the engine's calls to the internal host to the Worker's callback routes only", async () => {
    const handler = ClipEngine.outboundByHost?.["clipjobs.internal"];
    expect(handler).toBeTypeOf("function");
    const account = await createAccount();
    const client = await startJob(account, engine);
    const token = engine.starts(client.jobId).at(-1)!.token;
    const context = { containerId: "test", className: "ClipEngine" };
    const res = await handler!(
      new Request(`http://clipjobs.internal/internal/v1/jobs/${client.jobId}/progress`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ progress: 12, step: "Downloading video" }),
      }),
      env,
      context,
    );
    await expectAck(res);
    expect((await getJob(account, client.jobId)).progress).toBe(12);
    // Nothing but the callback routes: not the public API, not the operator API.
    const usage = await handler!(
      new Request("http://clipjobs.internal/api/v1/usage", { headers: { Authorization: `Bearer ${account.apiKey}` } }),
      env,
      context,
    );
    expect(usage.status).toBe(404);
    const adminRoute = await handler!(new Request("http://clipjobs.internal/admin/v1/accounts"), env, context);
    expect(adminRoute.status).toBe(404);
  });
});
