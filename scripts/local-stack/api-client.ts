/**
 * A small client of the public API, speaking HTTP exactly as any other
 * client would (bearer key, JSON bodies). Its shapes are the generated
 * client's (@clipjobs/client, from the OpenAPI document); the operator API's
 * client is scripts/lib/admin-client.ts.
 */
import type { components, JobStatus, Problem, SubmitJobResponse, Usage } from "@clipjobs/client";
import { fetchThroughDevProxy } from "../lib/dev-proxy-retry.ts";
import { delay, pollUntil } from "./poll.ts";

type Job = components["schemas"]["Job"];
export type ClipView = components["schemas"]["ClipDetail"];
export type { JobStatus, SubmitJobResponse, Usage };

type KeyOfAny<T> = T extends unknown ? keyof T : never;
type FieldOfAny<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;
/**
 * A job as GET /api/v1/jobs/{id} answers it (the generated Job, one shape per
 * status), read without narrowing on its status: the fields every status
 * has, and each other status's fields as optional.
 */
export type JobView = { [K in keyof Job]: Job[K] } & { [K in Exclude<KeyOfAny<Job>, keyof Job>]?: FieldOfAny<Job, K> };

/** Statuses after which a job never changes again. */
export const FINAL_STATUSES: readonly JobStatus[] = ["completed", "failed", "canceled"];

function isProblem(body: unknown): body is Problem {
  if (typeof body !== "object" || body === null) return false;
  const candidate = body as Record<string, unknown>;
  return typeof candidate.code === "string" && typeof candidate.title === "string";
}

export interface ApiResult {
  status: number;
  headers: Headers;
  /** Parsed JSON, or null for an empty or non-JSON body. */
  body: unknown;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
}

/** A response other than the one a helper expected, with the problem's code when there is one. */
export class ApiError extends Error {
  constructor(
    readonly what: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    const detail = isProblem(body) ? `${body.code}: ${body.detail ?? body.title} (request ${body.request_id})` : JSON.stringify(body);
    super(`${what} answered ${status} ${detail}`);
    this.name = "ApiError";
  }
}

/** A JSON object body as the documented shape `T`; anything else is an ApiError. */
function jsonObject<T extends object>(what: string, result: ApiResult): T {
  if (typeof result.body !== "object" || result.body === null || Array.isArray(result.body)) throw new ApiError(`${what} (not a JSON object)`, result.status, result.body);
  return result.body as T;
}

/** Longest wait honoured for a 429's Retry-After before giving up. */
const MAX_RATE_LIMIT_WAIT_MS = 65_000;

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly bearer: string,
  ) {}

  /** One request; a 429 is waited out (Retry-After) and retried, so polling never trips the limit. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResult> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.bearer}`, ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["Content-Type"] ??= "application/json";
      body = JSON.stringify(options.body);
    }
    const started = Date.now();
    for (;;) {
      const { response, text } = await fetchThroughDevProxy(`${this.baseUrl}${path}`, { method, headers, body });
      let parsed: unknown = null;
      try {
        parsed = text === "" ? null : (JSON.parse(text) as unknown);
      } catch {
        parsed = null;
      }
      if (response.status === 429 && Date.now() - started < MAX_RATE_LIMIT_WAIT_MS) {
        const retryAfter = Number(response.headers.get("Retry-After") ?? "1");
        await delay(Math.max(1, Number.isFinite(retryAfter) ? retryAfter : 1) * 1000);
        continue;
      }
      return { status: response.status, headers: response.headers, body: parsed };
    }
  }

  /**
   * A request that must answer `expected` with a JSON object, read as `T` (the
   * caller names the documented shape; the Worker's tests hold its answers to
   * the OpenAPI document).
   */
  async expect<T extends object>(expected: number, method: string, path: string, options?: RequestOptions): Promise<T> {
    const result = await this.request(method, path, options);
    if (result.status !== expected) throw new ApiError(`${method} ${path}`, result.status, result.body);
    return jsonObject<T>(`${method} ${path}`, result);
  }

  getJob(jobId: string): Promise<JobView> {
    return this.expect<JobView>(200, "GET", `/api/v1/jobs/${jobId}`);
  }

  /**
   * The job once it has ended or after `waitSeconds` (1-60), whichever comes
   * first (`Prefer: wait`); `held` is false when the Worker answered without
   * holding the read (no Preference-Applied).
   */
  async getJobWhenEnded(jobId: string, waitSeconds: number): Promise<{ job: JobView; held: boolean }> {
    const path = `/api/v1/jobs/${jobId}`;
    const result = await this.request("GET", path, { headers: { Prefer: `wait=${waitSeconds}` } });
    if (result.status !== 200) throw new ApiError(`GET ${path}`, result.status, result.body);
    return { job: jsonObject<JobView>(`GET ${path}`, result), held: result.headers.has("Preference-Applied") };
  }

  submit(body: { video_url: string; video_type: string; config_name?: string; captions_url?: string }): Promise<SubmitJobResponse> {
    return this.expect<SubmitJobResponse>(201, "POST", "/api/v1/jobs", { body });
  }

  usage(): Promise<Usage> {
    return this.expect<Usage>(200, "GET", "/api/v1/usage");
  }

  /** Polls the job until it is completed, failed or canceled (or `until` holds). */
  waitForJob(
    jobId: string,
    options: { timeoutMs: number; intervalMs?: number; until?: (job: JobView) => boolean; onUpdate?: (job: JobView) => void },
  ): Promise<JobView> {
    const done = options.until ?? ((job: JobView) => FINAL_STATUSES.includes(job.status));
    return pollUntil(
      async () => {
        const job = await this.getJob(jobId);
        options.onUpdate?.(job);
        return done(job) ? job : undefined;
      },
      { timeoutMs: options.timeoutMs, intervalMs: options.intervalMs ?? 1000, description: `job ${jobId}` },
    );
  }
}
