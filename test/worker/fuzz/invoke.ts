/**
 * Sends one request straight into the Worker's fetch handler (same isolate,
 * real D1, R2, Queues and Durable Objects) and waits for its waitUntil work.
 * Skipping SELF's service-binding hop is what lets the fuzz suites afford
 * thousands of requests per endpoint on a small machine.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../../src/index.ts";

export const ORIGIN = "http://worker.test";

export interface Captured {
  status: number;
  headers: Headers;
  text: string;
}

export async function send(request: Request): Promise<Captured> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  return { status: response.status, headers: response.headers, text };
}
