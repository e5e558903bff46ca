/** Helpers for the jobs suites: submit, deliver queue messages, read jobs and usage. */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { expect } from "vitest";
import { app } from "../../src/app.ts";
import { handleQueue } from "../../src/queue/consumer.ts";
import type { JobMessage } from "../../src/fleet/job-message.ts";
import { EngineClient, waitFor, type FakeEngine } from "./engine-stub.ts";
import { api, type TestAccount } from "./helpers.ts";

export const VIDEO_URL = "https://videos.example.com/talks/keynote.mp4";

export interface JobJson {
  job_id: string;
  status: string;
  progress?: number;
  step?: string;
  title?: string | null;
  clips_count?: number;
  clip_urls?: string[];
  clips?: {
    url: string;
    thumbnail_url: string;
    start_seconds: number;
    end_seconds: number;
    duration_seconds: number;
    score: number;
    reasons: string[];
    width: number;
    height: number;
  }[];
  error?: { code: string; message: string };
  video_url: string;
  video_type: string;
  config_name: string | null;
  created_at: string;
  updated_at: string;
  completed_at?: string | null;
  source_duration_seconds?: number;
  credits_charged?: number;
  message?: string;
}

export function submit(
  account: TestAccount,
  body: Record<string, unknown> = { video_url: VIDEO_URL, video_type: "podcast" },
  headers: Record<string, string> = {},
): Promise<Response> {
  return api(account, "/api/v1/jobs", { method: "POST", body: JSON.stringify(body), headers });
}

/**
 * Submits with a jobs queue that only records, so the queue's own delivery
 * cannot race a test that delivers the message by hand.
 */
export async function submitUndelivered(
  account: TestAccount,
  body: Record<string, unknown> = { video_url: VIDEO_URL, video_type: "podcast" },
): Promise<string> {
  const quiet = { ...env, JOBS: { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue };
  const res = await app.fetch(
    new Request("http://worker.test/api/v1/jobs", {
      method: "POST",
      headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    quiet,
    createExecutionContext(),
  );
  const text = await res.text();
  if (res.status !== 201) throw new Error(`submit answered ${res.status}: ${text}`);
  return (JSON.parse(text) as JobJson).job_id;
}

export async function submitJob(account: TestAccount, body?: Record<string, unknown>): Promise<string> {
  const res = await submit(account, body);
  const text = await res.text();
  if (res.status !== 201) throw new Error(`submit answered ${res.status}: ${text}`);
  return (JSON.parse(text) as JobJson).job_id;
}

export async function getJob(account: TestAccount, jobId: string): Promise<JobJson> {
  const res = await api(account, `/api/v1/jobs/${jobId}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET job answered ${res.status}: ${text}`);
  return JSON.parse(text) as JobJson;
}

export interface UsageJson {
  credits_remaining: number;
  credits_total: number;
  plan: string;
}

export async function getUsage(account: TestAccount): Promise<UsageJson> {
  const res = await api(account, "/api/v1/usage");
  expect(res.status).toBe(200);
  return res.json<UsageJson>();
}

/** Delivers one queue message for the job to the consumer, as attempt `attempts`. */
export async function deliver(account: TestAccount, jobId: string, attempts = 1) {
  const message: JobMessage = { job_id: jobId, account_id: account.accountId };
  const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [
    { id: `msg-${jobId}-${attempts}-${crypto.randomUUID()}`, timestamp: new Date(), attempts, body: message },
  ]);
  // The queue result records that a retry happened, not its delay: capture that here.
  const retryDelays: (number | undefined)[] = [];
  for (const queued of batch.messages) {
    const retry = queued.retry.bind(queued);
    queued.retry = (options?: QueueRetryOptions) => {
      retryDelays.push(options?.delaySeconds);
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await handleQueue(batch, env, ctx);
  return { ...(await getQueueResult(batch, ctx)), retryDelays };
}

/** Submits a job and delivers it, returning the engine's view of it (the newest StartJob). */
export async function startJob(
  account: TestAccount,
  engine: FakeEngine,
  body?: Record<string, unknown>,
): Promise<EngineClient> {
  // Delivered by hand only: the queue's own delivery never races the test.
  const jobId = await submitUndelivered(account, body);
  const result = await deliver(account, jobId);
  expect(result.explicitAcks).toHaveLength(1);
  const start = await waitFor(() => engine.starts(jobId).at(-1), `a StartJob for ${jobId}`);
  return EngineClient.from(start);
}

/** Reads the account's row directly (for figures the API does not expose, e.g. reserved credits). */
export async function accountCredits(accountId: string) {
  return env.DB.prepare(`SELECT credits_used, credits_reserved, credits_granted FROM accounts WHERE id = ?`)
    .bind(accountId)
    .first<{ credits_used: number; credits_reserved: number; credits_granted: number }>();
}
