/** The engine channel accepts only the per-job token the Worker signed. */
import { env, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { ClipEngine } from "../../src/engine/clip-engine.ts";
import { signEngineToken, verifyEngineToken } from "../../src/engine/token.ts";
import { expectAck, FakeEngine } from "./engine-stub.ts";
import { createAccount, expectProblem } from "./helpers.ts";
import { getJob, startJob } from "./jobs-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

describe("engine tokens", () => {
  const secret = "unit-test-secret-0123456789";
  const ALL = ["report", "upload", "transcribe", "source"] as const;

  it("verify a fresh token for its own job and its own scopes only", async () => {
    const token = await signEngineToken(secret, "job_AAAAAAAAAAAAAAAAAAAA", ["report", "upload"], 60);
    expect(await verifyEngineToken(secret, token, "job_AAAAAAAAAAAAAAAAAAAA", "report")).toMatchObject({ job_id: "job_AAAAAAAAAAAAAAAAAAAA" });
    expect(await verifyEngineToken(secret, token, "job_AAAAAAAAAAAAAAAAAAAA", "upload")).not.toBeNull();
    expect(await verifyEngineToken(secret, token, "job_AAAAAAAAAAAAAAAAAAAA", "source")).toBeNull();
    expect(await verifyEngineToken(secret, token, "job_BBBBBBBBBBBBBBBBBBBB", "report")).toBeNull();
    expect(await verifyEngineToken("another-secret-0123456789", token, "job_AAAAAAAAAAAAAAAAAAAA", "report")).toBeNull();
  });

  it("expire", async () => {
    const issuedAt = Date.now() - 120_000;
    const token = await signEngineToken(secret, "job_AAAAAAAAAAAAAAAAAAAA", ALL, 60, issuedAt);
    expect(await verifyEngineToken(secret, token, "job_AAAAAAAAAAAAAAAAAAAA", "report")).toBeNull();
    expect(await verifyEngineToken(secret, token, "job_AAAAAAAAAAAAAAAAAAAA", "report", issuedAt + 30_000)).not.toBeNull();
  });

  it("reject a payload edited after signing (another job, more scopes)", async () => {
    const token = await signEngineToken(secret, "job_AAAAAAAAAAAAAAAAAAAA", ["report"], 60);
    const [, signature] = token.split(".");
    const encode = (claims: unknown) => btoa(JSON.stringify(claims)).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
    const otherJob = encode({ job_id: "job_BBBBBBBBBBBBBBBBBBBB", exp: 9999999999, scopes: ALL });
    expect(await verifyEngineToken(secret, `${otherJob}.${signature}`, "job_BBBBBBBBBBBBBBBBBBBB", "report")).toBeNull();
    const moreScopes = encode({ job_id: "job_AAAAAAAAAAAAAAAAAAAA", exp: 9999999999, scopes: ALL });
    expect(await verifyEngineToken(secret, `${moreScopes}.${signature}`, "job_AAAAAAAAAAAAAAAAAAAA", "source")).toBeNull();
    expect(await verifyEngineToken(secret, "garbage", "job_AAAAAAAAAAAAAAAAAAAA", "report")).toBeNull();
  });
});

describe("internal routes", () => {
  it("answer 401 for a missing, malformed, foreign, expired token, an API key or the admin token", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    const other = await startJob(await createAccount(), engine);
    const expired = await signEngineToken(env.CALLBACK_TOKEN_SECRET, client.jobId, ["report"], 60, Date.now() - 3_600_000);
    const wrongSecret = await signEngineToken("not-the-engine-secret-0123", client.jobId, ["report"], 600);
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
    // The channel's own app answers a refusal as the public one does: problem+json with a request id.
    const refused = await handler!(new Request(`http://clipjobs.internal/internal/v1/jobs/${client.jobId}/progress`, { method: "POST" }), env, context);
    await expectProblem(refused, 401, "unauthorized");
    expect(refused.headers.get("Request-Id")).toBeTruthy();
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
