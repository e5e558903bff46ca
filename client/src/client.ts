/**
 * The clipjobs API from TypeScript: openapi-fetch over the generated types
 * (src/schema.ts), plus what every caller needs and should not have to
 * write: retries of 429/503 after Retry-After (src/retry.ts), an
 * Idempotency-Key on every submission, problem+json turned into
 * ClipjobsError, and waitForJob().
 */
import createClient, { type Client } from "openapi-fetch";
import { ClipjobsError } from "./errors.ts";
import { retryingFetch, sleep, type RetryOptions } from "./retry.ts";
import type { components, paths } from "./schema.ts";

type Schemas = components["schemas"];
export type Job = Schemas["Job"];
export type JobList = Schemas["JobList"];
type JsonBody<T> = T extends { requestBody: { content: { "application/json": infer Body } } } ? Body : never;
export type SubmitJobBody = JsonBody<paths["/api/v1/jobs"]["post"]>;
export type SubmitJobResponse = Schemas["SubmitJobResponse"];
export type ClipConfig = JsonBody<paths["/api/v1/configs/{name}"]["put"]>;
export type SavedConfig = Schemas["SavedConfig"];
export type ConfigList = Schemas["ConfigList"];
export type Usage = Schemas["Usage"];
export type Logo = Schemas["Logo"];
export type VideoTypes = Schemas["VideoTypes"];
export type JobStatus = Job["status"];
export type ListJobsQuery = NonNullable<paths["/api/v1/jobs"]["get"]["parameters"]["query"]>;
export type Transcript = Schemas["Transcript"];
export type ClipAnswer = Schemas["ClipAnswer"];
export type ClipEditBody = JsonBody<paths["/api/v1/jobs/{job_id}/clips/{index}"]["patch"]>;
export type ClipAddBody = JsonBody<paths["/api/v1/jobs/{job_id}/clips"]["post"]>;
export type TranscriptTextFormat = "vtt" | "srt" | "txt";
export const EXPORT_FORMATS = ["fcpxml", "edl", "otio", "mlt"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export type Webhook = Schemas["Webhook"];
export type WebhookWithSecret = Schemas["WebhookWithSecret"];
export type WebhookList = Schemas["WebhookList"];
export type CreateWebhookBody = Schemas["CreateWebhookBody"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookDeliveryList = Schemas["WebhookDeliveryList"];
export type ListDeliveriesQuery = NonNullable<paths["/api/v1/webhooks/{webhook_id}/deliveries"]["get"]["parameters"]["query"]>;

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
const SUBMIT_PATH = "/api/v1/jobs";
const FINAL_STATUSES: readonly JobStatus[] = ["completed", "failed", "canceled"];

export interface ClipjobsClientOptions {
  baseUrl?: string;
  apiKey?: string;
  /** The transport; default globalThis.fetch. */
  fetch?: (request: Request) => Promise<Response>;
  retry?: RetryOptions;
}

/** The longest `Prefer: wait` the API honours, in seconds. */
export const MAX_WAIT_SECONDS = 60;

export interface WaitOptions {
  /** Called with the job whenever its status, progress or step changes (and once at the start). */
  onProgress?: (job: Job) => void;
  /**
   * With onProgress, how often the job is read (each read held this long,
   * whole seconds, unless the job ends sooner); between reads when the
   * server does not hold them. Default 2 s.
   */
  intervalMs?: number;
  /** Give up (ClipjobsError `wait_timeout`) after this long; default: wait for as long as it takes. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A problem+json body read as text (a route asked for as text answers its problems as JSON all the same). */
function parsedProblem(body: unknown): unknown {
  if (typeof body !== "string") return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** Unwraps an openapi-fetch result: the data, or the problem as a ClipjobsError. */
function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) throw ClipjobsError.fromResponse(result.response, result.error);
  return result.data;
}

function progressKey(job: Job): string {
  return "progress" in job ? `${job.status}:${job.progress}:${job.step}` : job.status;
}

export function isFinished(job: Job): boolean {
  return FINAL_STATUSES.includes(job.status);
}

export class ClipjobsClient {
  /** The typed openapi-fetch client, for anything the helpers below do not cover. */
  readonly api: Client<paths>;
  readonly baseUrl: string;

  constructor(options: ClipjobsClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    const inner = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    const baseUrl = this.baseUrl;
    // A refused connection or DNS failure becomes a ClipjobsError too, so callers handle one error type.
    const transport = async (request: Request): Promise<Response> => {
      try {
        return await inner(request);
      } catch (error) {
        if (request.signal.aborted) throw error;
        const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
        throw new ClipjobsError("network_error", `Could not reach ${baseUrl}: ${reason}`, null);
      }
    };
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
      fetch: retryingFetch(transport, options.retry),
    });
    // Before the retrying transport sees the request, so every retry carries the same key.
    this.api.use({
      onRequest({ request, schemaPath }) {
        if (request.method === "POST" && schemaPath === SUBMIT_PATH && !request.headers.has(IDEMPOTENCY_HEADER)) {
          request.headers.set(IDEMPOTENCY_HEADER, crypto.randomUUID());
        }
        return request;
      },
    });
  }

  /** Submits a video. A retried submission (same key) never makes a second job; pass your own key to make your own retries safe too. */
  async submitJob(body: SubmitJobBody, options: { idempotencyKey?: string } = {}): Promise<SubmitJobResponse> {
    const headers = options.idempotencyKey === undefined ? {} : { [IDEMPOTENCY_HEADER]: options.idempotencyKey };
    return unwrap(await this.api.POST("/api/v1/jobs", { body, headers }));
  }

  async getJob(jobId: string): Promise<Job> {
    return unwrap(await this.api.GET("/api/v1/jobs/{job_id}", { params: { path: { job_id: jobId } } }));
  }

  /**
   * The job, once it is completed, failed or canceled or after `waitSeconds`
   * (1-60), whichever comes first (`Prefer: wait`). `held` says whether the
   * server honoured the wait (Preference-Applied); when it did not, the
   * answer came at once.
   */
  async getJobWhenEnded(jobId: string, waitSeconds: number, signal?: AbortSignal): Promise<{ job: Job; held: boolean }> {
    const result = await this.api.GET("/api/v1/jobs/{job_id}", {
      params: { path: { job_id: jobId }, header: { Prefer: `wait=${waitSeconds}` } },
      ...(signal ? { signal } : {}),
    });
    const job = unwrap(result);
    return { job, held: result.response.headers.has("Preference-Applied") };
  }

  async listJobs(query: ListJobsQuery = {}): Promise<JobList> {
    return unwrap(await this.api.GET("/api/v1/jobs", { params: { query } }));
  }

  async cancelJob(jobId: string): Promise<Job> {
    return unwrap(await this.api.POST("/api/v1/jobs/{job_id}/cancel", { params: { path: { job_id: jobId } } }));
  }

  async deleteJob(jobId: string): Promise<void> {
    const { error, response } = await this.api.DELETE("/api/v1/jobs/{job_id}", { params: { path: { job_id: jobId } } });
    if (error !== undefined || !response.ok) throw ClipjobsError.fromResponse(response, error);
  }

  async usage(): Promise<Usage> {
    return unwrap(await this.api.GET("/api/v1/usage"));
  }

  async videoTypes(): Promise<VideoTypes> {
    return unwrap(await this.api.GET("/api/v1/video-types"));
  }

  async listConfigs(): Promise<ConfigList> {
    return unwrap(await this.api.GET("/api/v1/configs"));
  }

  async getConfig(name: string): Promise<SavedConfig> {
    return unwrap(await this.api.GET("/api/v1/configs/{name}", { params: { path: { name } } }));
  }

  /** Creates or replaces; omitted fields take their defaults. */
  async putConfig(name: string, config: ClipConfig = {}): Promise<SavedConfig> {
    return unwrap(await this.api.PUT("/api/v1/configs/{name}", { params: { path: { name } }, body: config }));
  }

  async deleteConfig(name: string): Promise<void> {
    const { error, response } = await this.api.DELETE("/api/v1/configs/{name}", { params: { path: { name } } });
    if (error !== undefined || !response.ok) throw ClipjobsError.fromResponse(response, error);
  }

  /** A completed job's transcript: words and sentences with times in the source. */
  async getTranscript(jobId: string): Promise<Transcript> {
    const result = await this.api.GET("/api/v1/jobs/{job_id}/transcript", { params: { path: { job_id: jobId }, query: { format: "json" } } });
    return unwrap(result) as Transcript;
  }

  /** The transcript rendered as WebVTT, SubRip or plain text (one sentence per line). */
  async getTranscriptText(jobId: string, format: TranscriptTextFormat): Promise<string> {
    const result = await this.api.GET("/api/v1/jobs/{job_id}/transcript", { params: { path: { job_id: jobId }, query: { format } }, parseAs: "text" });
    if (result.error !== undefined || result.data === undefined) throw ClipjobsError.fromResponse(result.response, parsedProblem(result.error));
    return result.data;
  }

  /** A completed job's clips as an editor timeline (FCPXML, CMX 3600 EDL, OpenTimelineIO or MLT), as the file's text. */
  async exportJob(jobId: string, format: ExportFormat): Promise<string> {
    const result = await this.api.GET("/api/v1/jobs/{job_id}/export", { params: { path: { job_id: jobId }, query: { format } }, parseAs: "text" });
    if (result.error !== undefined || result.data === undefined) throw ClipjobsError.fromResponse(result.response, parsedProblem(result.error));
    return result.data;
  }

  /** One clip of a completed job, with its version, its pending edit and its caption words. */
  async getClip(jobId: string, index: number): Promise<ClipAnswer> {
    return unwrap(await this.api.GET("/api/v1/jobs/{job_id}/clips/{index}", { params: { path: { job_id: jobId, index } } }));
  }

  /** Edits a clip (a new version is rendered); the answer is the clip with its queued edit. */
  async editClip(jobId: string, index: number, body: ClipEditBody): Promise<ClipAnswer> {
    return unwrap(await this.api.PATCH("/api/v1/jobs/{job_id}/clips/{index}", { params: { path: { job_id: jobId, index } }, body }));
  }

  /** Cuts a new clip from a completed job's source; the answer is the new clip, queued (version 0). */
  async addClip(jobId: string, body: ClipAddBody): Promise<ClipAnswer> {
    return unwrap(await this.api.POST("/api/v1/jobs/{job_id}/clips", { params: { path: { job_id: jobId } }, body }));
  }

  async listWebhooks(): Promise<WebhookList> {
    return unwrap(await this.api.GET("/api/v1/webhooks"));
  }

  /** Creates an endpoint; the answer carries its signing secret, shown this once. */
  async createWebhook(body: CreateWebhookBody): Promise<WebhookWithSecret> {
    return unwrap(await this.api.POST("/api/v1/webhooks", { body }));
  }

  async deleteWebhook(webhookId: string): Promise<void> {
    const { error, response } = await this.api.DELETE("/api/v1/webhooks/{webhook_id}", { params: { path: { webhook_id: webhookId } } });
    if (error !== undefined || !response.ok) throw ClipjobsError.fromResponse(response, error);
  }

  /** Queues a webhook.test event to the endpoint; the answer is its delivery. */
  async testWebhook(webhookId: string): Promise<WebhookDelivery> {
    return unwrap(await this.api.POST("/api/v1/webhooks/{webhook_id}/test", { params: { path: { webhook_id: webhookId } } }));
  }

  /** The endpoint's delivery log, newest first. */
  async listWebhookDeliveries(webhookId: string, query: ListDeliveriesQuery = {}): Promise<WebhookDeliveryList> {
    return unwrap(await this.api.GET("/api/v1/webhooks/{webhook_id}/deliveries", { params: { path: { webhook_id: webhookId }, query } }));
  }

  /**
   * Uploads (or replaces) the account's logo: the image's bytes, a PNG or
   * JPEG of at most 1 MiB and 1024 pixels a side. The server judges the
   * type by the bytes; the Content-Type sent is only a label.
   */
  async putLogo(image: Uint8Array | ArrayBuffer | Blob, contentType: "image/png" | "image/jpeg" = "image/png"): Promise<Logo> {
    const body = image instanceof Blob ? image : new Blob([image instanceof Uint8Array ? new Uint8Array(image) : image]);
    const response = await this.api.PUT("/api/v1/logo", {
      body: body as unknown as string,
      bodySerializer: (raw: unknown) => raw as Blob,
      headers: { "Content-Type": contentType },
    });
    return unwrap(response);
  }

  async getLogo(): Promise<Logo> {
    return unwrap(await this.api.GET("/api/v1/logo"));
  }

  async deleteLogo(): Promise<void> {
    const { error, response } = await this.api.DELETE("/api/v1/logo");
    if (error !== undefined || !response.ok) throw ClipjobsError.fromResponse(response, error);
  }

  /**
   * Waits until the job is completed, failed or canceled, and returns it as
   * it finished. Each read is held by the server until the job ends
   * (`Prefer: wait`), so the end is seen the moment it is committed: for up
   * to a minute at a time without onProgress, for one interval with it (the
   * progress is then read every interval, as a progress bar needs). A server
   * that does not hold a read is polled every interval instead.
   */
  async waitForJob(jobId: string, options: WaitOptions = {}): Promise<Job> {
    const interval = options.intervalMs ?? 2000;
    const holdSeconds = options.onProgress ? Math.min(MAX_WAIT_SECONDS, Math.floor(interval / 1000)) : MAX_WAIT_SECONDS;
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    let lastKey: string | null = null;
    for (;;) {
      const waitSeconds = Math.min(holdSeconds, Math.floor((deadline - Date.now()) / 1000));
      const { job, held } = waitSeconds >= 1 ? await this.getJobWhenEnded(jobId, waitSeconds, options.signal) : { job: await this.getJob(jobId), held: false };
      const key = progressKey(job);
      if (key !== lastKey) {
        lastKey = key;
        options.onProgress?.(job);
      }
      if (isFinished(job)) return job;
      // A held read that ran out already waited: ask again at once. Otherwise wait an interval first.
      const pause = held ? 0 : interval;
      if (Date.now() + pause >= deadline) {
        throw new ClipjobsError("wait_timeout", `Job ${jobId} is still ${job.status} after ${options.timeoutMs} ms.`, null);
      }
      if (pause > 0) await sleep(pause, options.signal);
    }
  }
}
