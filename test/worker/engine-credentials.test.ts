/**
 * No engine holds a secret that authorises anything beyond its own job
 *: its environment is what the Container class gives it, its job's
 * token comes with StartJob, and from all of that an attacker running code
 * in the engine tries to make a token for another job. Every attempt is
 * refused; the job's own token opens only its own job's routes and scopes.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { fromBase64, importVerifyKey, toBase64Url } from "#contract";
import { engineEnvironment } from "../../src/engine/clip-engine.ts";
import type { Job } from "../../src/db/jobs.ts";
import { callbacks } from "../../src/engine/routes.ts";
import { CHANNEL_ROUTES, grantedScopes, SCOPES, scopeOf } from "../../src/engine/scopes.ts";
import { clipReport, FakeEngine } from "./engine-stub.ts";
import { createAccount, expectProblem } from "./helpers.ts";
import { deliver as deliverTo, recordingQueue } from "./fleet/harness.ts";
import { getJob, startJob, submitUndelivered } from "./jobs-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

const encoder = new TextEncoder();

async function hmac(key: Uint8Array, text: string): Promise<string> {
  const imported = await crypto.subtle.importKey("raw", key as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toBase64Url(await crypto.subtle.sign("HMAC", imported, encoder.encode(text)));
}

/** Every string an engine holds, and the bytes each could stand for as a key. */
function keyMaterial(strings: readonly string[]): Uint8Array[] {
  const keys: Uint8Array[] = [];
  for (const value of strings) {
    keys.push(encoder.encode(value));
    const decoded = fromBase64(value);
    if (decoded && decoded.length > 0) keys.push(decoded);
    for (const part of value.split(/[.,=]/)) if (part.length >= 16) keys.push(encoder.encode(part));
  }
  return keys;
}

describe("an engine given everything in its environment", () => {
  it("holds no secret of the Worker: only the public key, which cannot sign", async () => {
    const engineEnv = await engineEnvironment(env);
    expect(Object.keys(engineEnv).sort()).toEqual(["ALLOW_PRIVATE_SOURCES", "CALLBACK_BASE", "ENGINE_VERIFY_KEY", "HOST"]);
    const everything = JSON.stringify(engineEnv);
    for (const secret of [env.ENGINE_SIGNING_KEY, env.CALLBACK_TOKEN_SECRET, env.ADMIN_TOKEN]) expect(everything).not.toContain(secret);
    // The verify key is a public key: WebCrypto will not make a signing key of it.
    await expect(
      crypto.subtle.importKey("raw", fromBase64(engineEnv.ENGINE_VERIFY_KEY!)!, { name: "Ed25519" }, false, ["sign"]),
    ).rejects.toThrow();
    await expect(importVerifyKey(engineEnv.ENGINE_VERIFY_KEY!)).resolves.toBeTruthy();
  });

  it("gets the operator's platform proxy when one is set, and nothing of the cookies key", async () => {
    const engineEnv = await engineEnvironment({ ...env, PLATFORM_PROXY_URL: " http://user:pw@proxy.example:3128 " });
    expect(engineEnv.PLATFORM_PROXY_URL).toBe("http://user:pw@proxy.example:3128");
    expect(JSON.stringify(engineEnv)).not.toContain(env.COOKIES_KEY);
  });

  it("cannot produce a token the Worker accepts for another job (it tries)", async () => {
    const mine = await startJob(await createAccount(), engine);
    const victimAccount = await createAccount();
    const victim = await startJob(victimAccount, engine);
    const start = engine.starts(mine.jobId).at(-1)!;
    const startRequest = engine.requests.find((r) => r.path === "/jobs" && r.body.includes(mine.jobId))!;
    const engineEnv = await engineEnvironment(env);
    // What code running in the engine can read: its environment, its StartJob (with its token) and that request's signature.
    const held = [...Object.values(engineEnv), start.token, startRequest.body, startRequest.signature ?? "", ...start.token.split(".")];

    const claims = { job_id: victim.jobId, exp: Math.floor(Date.now() / 1000) + 3600, scopes: Object.keys(SCOPES) };
    const payload = toBase64Url(encoder.encode(JSON.stringify(claims)));
    const [, mySignature] = start.token.split(".");
    const forgeries = [
      start.token, // my own token, on another job
      `${payload}.${mySignature}`, // another job's claims under my signature
      `${payload}.`, // unsigned
      payload,
    ];
    for (const key of keyMaterial(held)) forgeries.push(`${payload}.${await hmac(key, payload)}`);
    expect(forgeries.length).toBeGreaterThan(20);

    for (const token of forgeries) {
      await expectProblem(await victim.postJson("progress", { progress: 50, step: "Hijacked" }, token), 401, "unauthorized");
      await expectProblem(await victim.postJson("fail", { code: "internal_error", message: "hijacked" }, token), 401, "unauthorized");
    }
    await expectProblem(
      await victim.send("clips/0", { method: "PUT", headers: { "Content-Type": "video/mp4", "Content-Length": "4" }, body: new Uint8Array(4), token: start.token }),
      401,
      "unauthorized",
    );
    await expectProblem(
      await victim.postJson("complete", { title: "x", source_duration_seconds: 10, clips: [clipReport(0)], transcript: null, transcript_unavailable_reason: null }, start.token),
      401,
      "unauthorized",
    );
    expect(await getJob(victimAccount, victim.jobId)).toMatchObject({ status: "processing", progress: 0 });
    // The engine's own token does what it is for.
    expect((await mine.progress({ progress: 5, step: "Downloading video" })).status).toBe(200);
  });

  it("opens only its scopes: a job made from a URL has no source to read", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await expectProblem(await client.send("source"), 401, "unauthorized");
    // Nor, without a prompt, the embeddings route (Workers AI, billed to the service).
    await expectProblem(await client.postJson("similarity", { query: "x", texts: ["a"] }), 401, "unauthorized");
    // Nor, without a caption_language, translation (Workers AI); nor, placing no logo, the account's logo.
    await expectProblem(await client.postJson("translate", { source_language: "en", target_language: "fr", texts: ["a"] }), 401, "unauthorized");
    await expectProblem(await client.send("logo"), 401, "unauthorized");
    // A route that belongs to no scope is opened by no token.
    await expectProblem(await client.postJson("admin", {}), 401, "unauthorized");
    expect((await client.progress({ progress: 1, step: "Downloading video" })).status).toBe(200);
  });
});

describe("the scope list", () => {
  it("holds every route of the engine channel: no route is left that no token opens", () => {
    const prefix = "/:job_id/";
    const channel = callbacks.routes.filter((route) => route.path.startsWith(prefix) && route.method !== "ALL");
    // The channel's routes as mounted (translate and logo among them), each with a sample path.
    const missing = channel
      .map((route) => ({ method: route.method, sub: route.path.slice(prefix.length).replaceAll(":index", "0") }))
      .filter((route) => scopeOf(route.method, route.sub) === null);
    expect(channel.length).toBeGreaterThanOrEqual(CHANNEL_ROUTES.length);
    expect(missing).toEqual([]);
    for (const sub of ["translate", "logo", "cookies", "similarity", "source", "transcribe", "judge"]) expect(channel.map((r) => r.path)).toContain(prefix + sub);
  });

  it("grants each job only the scopes its configuration needs", () => {
    const config = (over: Record<string, unknown>) => ({ prompt: null, caption_language: null, logo_position: "off", ...over }) as unknown as Job["config"];
    const plain = { uploadId: null, videoType: "podcast", config: config({}), videoUrl: "https://cdn.example.com/talk.mp4" } as Pick<Job, "uploadId" | "videoType" | "config" | "videoUrl">;
    expect(grantedScopes(plain).sort()).toEqual(["judge", "report", "transcribe", "upload"]);
    expect(grantedScopes({ ...plain, uploadId: "upl_1" })).toContain("source");
    expect(grantedScopes({ ...plain, config: config({ prompt: "why" }) })).toContain("similarity");
    expect(grantedScopes({ ...plain, config: config({ caption_language: "fr" }) })).toContain("translate");
    expect(grantedScopes({ ...plain, config: config({ logo_position: "top-left" }) })).toContain("logo");
    // Only a job whose video is on a platform may ask for its account's cookies file.
    expect(grantedScopes({ ...plain, videoUrl: "https://www.youtube.com/watch?v=abc" })).toContain("cookies");
    expect(grantedScopes({ ...plain, uploadId: "upl_1", videoUrl: "upload://upl_1/a.mp4" })).not.toContain("cookies");
    // A job stored before the steering and brand settings existed (no such members) asks for none of them.
    expect(grantedScopes({ ...plain, config: {} as unknown as Job["config"] }).sort()).toEqual(["judge", "report", "transcribe", "upload"]);
  });
});

describe("signed requests to the engine", () => {
  it("carry a fresh nonce each: a second dispatch of the same job is a new request the engine accepts, never a replay", async () => {
    const account = await createAccount();
    const jobId = await submitUndelivered(account);
    // No instance free at first: the job goes back to queued, and its dispatch chain's next message dispatches it again.
    engine.mode = "busy";
    const queue = recordingQueue();
    await deliverTo({ ...env, JOBS: queue.queue }, { job_id: jobId, account_id: account.accountId });
    engine.mode = "up";
    expect(queue.sent).toHaveLength(1);
    await deliverTo(env, queue.sent[0]!.body);
    const starts = engine.requests.filter((r) => r.path === "/jobs" && r.body.includes(jobId));
    expect(starts).toHaveLength(2);
    // The same job, the same StartJob but for what each dispatch renews (its token and its dispatch time).
    const sameJob = (body: string) => {
      const { token: _token, timeline, ...rest } = JSON.parse(body) as Record<string, unknown> & { timeline?: Record<string, unknown> };
      return { ...rest, submitted_at: timeline?.submitted_at };
    };
    expect(sameJob(starts[0]!.body)).toEqual(sameJob(starts[1]!.body));
    expect(new Set(starts.map((r) => r.signature)).size).toBe(2);
    expect(starts.map((r) => r.verdict)).toEqual(["ok", "ok"]);
    expect((await getJob(account, jobId)).status).toBe("processing");
  });
});
