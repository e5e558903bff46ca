/**
 * waitForJob over a scripted transport: which reads it sends (`Prefer:
 * wait`) and what it does with each answer. Nothing is timed: a client that
 * would pause where it must not runs into its own timeout at once (the
 * interval is longer than the timeout), and retries sleep through an
 * injected no-op.
 */
import { describe, expect, it } from "vitest";
import { ClipjobsClient, type Job } from "../src/client.ts";
import { ClipjobsError } from "../src/errors.ts";

const QUEUED = { job_id: "job_abc", status: "queued", progress: 0, step: "Queued", video_url: null, video_type: "podcast", created_at: "2026-01-01T00:00:00Z" };
const PROCESSING = { ...QUEUED, status: "processing", progress: 40, step: "Rendering clip 1 of 5" };
const COMPLETED = { job_id: "job_abc", status: "completed", video_type: "podcast", created_at: "2026-01-01T00:00:00Z", clips_count: 0, clip_urls: [], clips: [] };

/** A job answer; `applied` is the Preference-Applied the server would send (held), or null. */
function answer(job: object, applied: string | null): Response {
  return Response.json(job, { headers: applied === null ? {} : { "Preference-Applied": applied } });
}

function scripted(answers: Response[]) {
  const prefers: (string | null)[] = [];
  const transport = async (request: Request): Promise<Response> => {
    prefers.push(request.headers.get("Prefer"));
    const next = answers.shift();
    if (!next) throw new Error("transport called more often than scripted");
    return next;
  };
  const client = new ClipjobsClient({ baseUrl: "http://api.test", apiKey: "ck_test", fetch: transport, retry: { sleep: async () => {} } });
  return { client, prefers };
}

/** Longer than any timeout below: a client that pauses for an interval throws wait_timeout instead. */
const NEVER_PAUSE = { intervalMs: 3_600_000, timeoutMs: 1_800_000 };

describe("waitForJob with held reads (Prefer: wait)", () => {
  it("without onProgress, holds each read for a minute and asks again at once after one runs out", async () => {
    const { client, prefers } = scripted([answer(QUEUED, "wait=60"), answer(PROCESSING, "wait=60"), answer(COMPLETED, "wait=60")]);
    const job = await client.waitForJob("job_abc", NEVER_PAUSE);
    expect(job.status).toBe("completed");
    expect(prefers).toEqual(["wait=60", "wait=60", "wait=60"]);
  });

  it("with onProgress, holds each read for one interval and reports every change", async () => {
    const { client, prefers } = scripted([answer(QUEUED, "wait=2"), answer(PROCESSING, "wait=2"), answer(PROCESSING, "wait=2"), answer(COMPLETED, "wait=2")]);
    const seen: Job[] = [];
    const job = await client.waitForJob("job_abc", { onProgress: (j) => seen.push(j) });
    expect(job.status).toBe("completed");
    expect(prefers).toEqual(["wait=2", "wait=2", "wait=2", "wait=2"]);
    expect(seen.map((j) => j.status)).toEqual(["queued", "processing", "completed"]);
  });

  it("polls without the preference when the interval is under a second", async () => {
    const { client, prefers } = scripted([answer(QUEUED, null), answer(COMPLETED, null)]);
    await client.waitForJob("job_abc", { onProgress: () => {}, intervalMs: 1 });
    expect(prefers).toEqual([null, null]);
  });

  it("pauses an interval before asking again when the server did not hold the read", async () => {
    const unheld = scripted([answer(QUEUED, null)]);
    const error = await unheld.client.waitForJob("job_abc", NEVER_PAUSE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClipjobsError);
    expect((error as ClipjobsError).code).toBe("wait_timeout");
    expect(unheld.prefers).toEqual(["wait=60"]);

    const polled = scripted([answer(QUEUED, null), answer(COMPLETED, null)]);
    expect((await polled.client.waitForJob("job_abc", { intervalMs: 1 })).status).toBe("completed");
    expect(polled.prefers).toEqual(["wait=60", "wait=60"]);
  });

  it("asks for no more than the time left before its own timeout", async () => {
    const { client, prefers } = scripted([answer(COMPLETED, "wait=5")]);
    await client.waitForJob("job_abc", { timeoutMs: 5_999 });
    expect(prefers[0]).toMatch(/^wait=[1-5]$/);
  });

  it("keeps the preference on a read retried after 429 Retry-After", async () => {
    const limited = new Response(JSON.stringify({ type: "/docs/errors#rate_limited", title: "rate_limited", status: 429, detail: "x", code: "rate_limited", request_id: "r" }), {
      status: 429,
      headers: { "Content-Type": "application/problem+json", "Retry-After": "3" },
    });
    const { client, prefers } = scripted([limited, answer(COMPLETED, "wait=60")]);
    expect((await client.waitForJob("job_abc", NEVER_PAUSE)).status).toBe("completed");
    expect(prefers).toEqual(["wait=60", "wait=60"]);
  });
});
