/**
 * Engine tokens live from dispatch, not from submission: a job that waited in
 * the queue longer than ENGINE_TOKEN_TTL_SECONDS still gets a token its engine
 * can use, and every dispatch (a restart after a redeploy included) signs a
 * new one.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app.ts";
import { beforeEach, describe, expect, it } from "vitest";
import { tokenTtlSeconds } from "../../src/settings.ts";
import { EngineClient, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { createAccount } from "./helpers.ts";
import { deliver as deliverMessage } from "./fleet/harness.ts";
import { deliver, getJob, submitUndelivered } from "./jobs-helpers.ts";
import type { JobMessage } from "../../src/fleet/job-message.ts";

function expiryOf(token: string): number {
  const payload = JSON.parse(atob(token.split(".")[0]!.replace(/-/g, "+").replace(/_/g, "/"))) as { exp: number };
  return payload.exp;
}

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

describe("engine token lifetime", () => {
  it("counts from dispatch: a job queued longer than the token TTL still reports", async () => {
    const account = await createAccount();
    // Delivered by this test only (a background delivery while the engine is down would start a retry chain).
    const jobId = await submitUndelivered(account);
    // It waited in the queue for longer than a token lives.
    const longAgo = new Date(Date.now() - (tokenTtlSeconds(env) + 3600) * 1000).toISOString();
    await env.DB.prepare(`UPDATE jobs SET created_at = ? WHERE id = ?`).bind(longAgo, jobId).run();
    await deliver(account, jobId, 2);
    const start = await waitFor(() => engine.starts(jobId).at(-1), "StartJob");
    expect(expiryOf(start.token)).toBeGreaterThan(Math.floor(Date.now() / 1000) + tokenTtlSeconds(env) - 60);
    const client = EngineClient.from(start);
    await expectAck(await client.progress({ progress: 5, step: "Downloading video" }));
    expect((await getJob(account, jobId)).step).toBe("Downloading video");
  });

  it("signs a new token at every dispatch", async () => {
    const account = await createAccount();
    // Delivered by this test only: the queue's own background delivery of the submission would be a
    // second StartJob of the first dispatch (same second, same token), which a loaded machine can
    // deliver at any moment of this test.
    const jobId = await submitUndelivered(account);
    await deliver(account, jobId);
    const first = await waitFor(() => engine.starts(jobId).at(-1), "StartJob");
    expect(engine.starts(jobId)).toHaveLength(1);
    // The interruption's dispatch message goes to a recording queue, so only this test dispatches again.
    const sent: JobMessage[] = [];
    const recording = {
      send: async (body: unknown) => void sent.push(body as JobMessage),
      sendBatch: async (messages: Iterable<MessageSendRequest>) => {
        for (const m of messages) sent.push(m.body as JobMessage);
      },
    } as unknown as Queue;
    const ctx = createExecutionContext();
    const interrupted = await app.fetch(
      new Request(EngineClient.from(first).url("interrupted"), {
        method: "POST",
        headers: { Authorization: `Bearer ${first.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ reason: "shutdown" }),
      }),
      { ...env, JOBS: recording },
      ctx,
    );
    await expectAck(interrupted);
    await waitOnExecutionContext(ctx);
    // The fleet granted it again (the head of the line): its new dispatch chain's message.
    const grant = await waitFor(() => sent.find((m) => m.job_id === jobId && (m.dispatch ?? 0) > 0), "the new dispatch message");
    // A token's expiry counts whole seconds: dispatch again once the clock has left the second the first was signed in.
    const firstSignedIn = expiryOf(first.token) - tokenTtlSeconds(env);
    await waitFor(() => (Math.floor(Date.now() / 1000) > firstSignedIn ? true : undefined), "the next second");
    await deliverMessage(env, grant);
    const second = await waitFor(() => engine.starts(jobId)[1], "a second StartJob");
    expect(engine.starts(jobId)).toHaveLength(2);
    expect(second.token).not.toBe(first.token);
    expect(expiryOf(second.token)).toBeGreaterThan(expiryOf(first.token));
  });
});
