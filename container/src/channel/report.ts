import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { z } from "zod";
import {
  CHUNK_START_HEADER,
  COMPLETION_IN_PROGRESS,
  CallbackAck,
  JudgeResult,
  type JudgeRequest,
  ProbeAck,
  SimilarityResult,
  TranscribeResult,
  TranslateResult,
  callbackUrl,
  type TranslateRequest,
  type CompleteReport,
  type FailReport,
  type InterruptedReport,
  type ProbeReport,
  type ProgressReport,
  type SimilarityRequest,
} from "#contract";
import { JobAborted } from "../shared/errors.ts";

/**
 * Bytes read from disk at a time for an upload (clips, thumbnails, sidecars).
 * A read stream's default 64 KiB made every clip a few hundred small socket
 * writes: 5 PUTs of 30 MB to a loopback server cost 0.6-0.7 s of CPU (sender
 * and a Node receiver together), 0.2 s with 1 MiB reads. Clip uploads run
 * while the next clips render, on the same cores.
 */
const UPLOAD_READ_BYTES = 1024 * 1024;

/**
 * Client for direction 2 of the contract (engine -> Worker callbacks), one per
 * job. 5xx answers and network errors are retried with backoff; a 409 means
 * the Worker no longer considers the job active, so the job is aborted and
 * this reporter falls silent for good.
 */
export interface ReporterOptions {
  callbackBase: string;
  jobId: string;
  token: string;
  attempts: number;
  retryBaseMs: number;
  timeoutMs: number;
  /** Called once on the first 409. */
  onInactive: () => void;
}

export class CallbackError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = "CallbackError";
    this.status = status;
  }
}

class RetryableError extends Error {}

/** The Worker is still publishing the job's clips: the same completion is sent again (not a failed attempt). */
class StillCompleting extends Error {}

/**
 * Calls answered "completion in progress" before the reporter gives up: each
 * such answer means the Worker spent its time budget publishing (about 15 s),
 * so this bounds a completion's publishing at about half an hour.
 */
const MAX_IN_PROGRESS_ANSWERS = 120;

export type TranscribeOutcome =
  | { kind: "ok"; result: TranscribeResult }
  | { kind: "unavailable" }
  | { kind: "failed"; detail: string };

export type SimilarityOutcome =
  | { kind: "ok"; result: SimilarityResult }
  | { kind: "unavailable" }
  | { kind: "failed"; detail: string };

export type TranslateOutcome =
  | { kind: "ok"; texts: string[] }
  | { kind: "unavailable" }
  | { kind: "failed"; detail: string };

interface RawAnswer {
  status: number;
  body: string;
  /** The body's bytes, up to the request's limit. */
  bytes: Buffer;
}

/** Answers are small acks; a body longer than this is cut (the logo route asks for more). */
const ANSWER_BYTES = 65536;

function problemCode(body: string): string | null {
  try {
    const code = (JSON.parse(body) as { code?: unknown }).code;
    return typeof code === "string" ? code : null;
  } catch {
    return null;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export class JobReporter {
  private readonly opts: ReporterOptions;
  /** Aborted once the job must send nothing more (canceled or 409). */
  private readonly silence = new AbortController();

  constructor(opts: ReporterOptions) {
    this.opts = opts;
  }

  /** Stops every callback in flight and refuses new ones. */
  silenceNow(): void {
    if (!this.silence.signal.aborted) this.silence.abort(new JobAborted("inactive"));
  }

  get silenced(): boolean {
    return this.silence.signal.aborted;
  }

  progress(report: ProgressReport): Promise<void> {
    return this.postJson("progress", report, CallbackAck).then(() => undefined);
  }

  probe(report: ProbeReport): Promise<ProbeAck> {
    return this.postJson("probe", report, ProbeAck);
  }

  /** The schema's input: members with defaults (judgement, chapters) may be left out. */
  complete(report: z.input<typeof CompleteReport>): Promise<void> {
    return this.postJson("complete", report, CallbackAck).then(() => undefined);
  }

  /** Tells the Worker the engine is stopping under the job (it requeues the job). */
  interrupted(report: InterruptedReport): Promise<void> {
    return this.postJson("interrupted", report, CallbackAck).then(() => undefined);
  }

  fail(report: FailReport): Promise<void> {
    return this.postJson("fail", report, CallbackAck).then(() => undefined);
  }

  /**
   * Sends one audio chunk to the Worker's speech-to-text route. 503 means the
   * deployment has no speech-to-text (local dev) and 502 that the Worker
   * already retried the model: both are answers, not errors to retry here.
   * `stop` ends the request (and its retries) at once with its reason: the
   * speech stage sends several chunks at a time and stops the others when one
   * of them ends it, or when the job is stopped.
   */
  async transcribe(wavPath: string, chunkStartSeconds: number, stop?: AbortSignal): Promise<TranscribeOutcome> {
    const body = await readFile(wavPath, stop ? { signal: stop } : {});
    return this.withRetries(async (signal) => {
      const answer = await this.send(
        "POST",
        "transcribe",
        { "content-type": "audio/wav", "content-length": String(body.length), [CHUNK_START_HEADER.toLowerCase()]: chunkStartSeconds.toFixed(3) },
        signal,
        async (req) => {
          req.end(body);
        },
      );
      // 403 ai_scope_exceeded: the Worker will not spend more Workers AI on this job.
      if (answer.status === 503 || answer.status === 403) return { kind: "unavailable" } as const;
      if (answer.status === 502) return { kind: "failed", detail: answer.body.slice(0, 200) } as const;
      return { kind: "ok", result: this.parse(answer, TranscribeResult) } as const;
    }, stop);
  }

  /**
   * Asks the Worker how close in meaning each text is to the query.
   * 503 (no embeddings on this deployment) and 404 (a Worker without the
   * route) mean "unavailable"; 502 that the Worker already retried the model.
   */
  async similarity(body: SimilarityRequest): Promise<SimilarityOutcome> {
    const payload = Buffer.from(JSON.stringify(body));
    return this.withRetries(async (signal) => {
      const answer = await this.send("POST", "similarity", { "content-type": "application/json", "content-length": String(payload.length) }, signal, async (req) => {
        req.end(payload);
      });
      if (answer.status === 503 || answer.status === 404 || answer.status === 403) return { kind: "unavailable" } as const;
      if (answer.status === 502) return { kind: "failed", detail: answer.body.slice(0, 200) } as const;
      const result = this.parse(answer, SimilarityResult);
      if (result.similarities.length !== body.texts.length) throw new CallbackError("similarity answered the wrong number of values", answer.status);
      return { kind: "ok", result } as const;
    });
  }

  /**
   * Translates texts through the Worker's /translate route (Workers AI). 503
   * means the deployment cannot translate (local dev) and 502 that the
   * Worker already retried the model: both are answers, not errors to retry.
   */
  async translate(request: TranslateRequest): Promise<TranslateOutcome> {
    const payload = Buffer.from(JSON.stringify(request));
    return this.withRetries(async (signal) => {
      const answer = await this.send("POST", "translate", { "content-type": "application/json", "content-length": String(payload.length) }, signal, async (req) => {
        req.end(payload);
      });
      // 404: a Worker deployed without the route cannot translate either; 403 ai_scope_exceeded: it will not for this job.
      if (answer.status === 503 || answer.status === 404 || answer.status === 403) return { kind: "unavailable" } as const;
      if (answer.status === 502) return { kind: "failed", detail: answer.body.slice(0, 200) } as const;
      const { texts } = this.parse(answer, TranslateResult);
      if (texts.length !== request.texts.length) throw new CallbackError("the translation answered a different number of texts", answer.status);
      return { kind: "ok", texts } as const;
    });
  }

  /**
   * Asks the Worker to judge candidate clips (docs/judgement.md). One attempt
   * only: the Worker already retried the model, and a retry here would spend
   * the job's judgement budget again. Null when no answer came (a Worker
   * without the route, an error, a timeout): the engine ranks on signals.
   */
  async judge(request: JudgeRequest): Promise<JudgeResult | null> {
    const payload = Buffer.from(JSON.stringify(request));
    if (this.silence.signal.aborted) throw new JobAborted("inactive");
    const signal = AbortSignal.any([this.silence.signal, AbortSignal.timeout(this.opts.timeoutMs)]);
    let answer: RawAnswer;
    try {
      answer = await this.send("POST", "judge", { "content-type": "application/json", "content-length": String(payload.length) }, signal, async (req) => {
        req.end(payload);
      });
    } catch (error) {
      if (this.silence.signal.aborted) throw new JobAborted("inactive");
      return null;
    }
    if (answer.status === 409) this.parse(answer, CallbackAck); // silences the job and throws
    if (answer.status !== 200) return null;
    try {
      return this.parse(answer, JudgeResult);
    } catch {
      return null;
    }
  }

  /**
   * Reads the account's logo from the job channel (the image's bytes and
   * type), or null when the Worker has none for this job (404). Refuses an
   * answer over `maxBytes`.
   */
  async getLogo(maxBytes: number): Promise<{ bytes: Buffer; contentType: string } | null> {
    return this.withRetries(async (signal) => {
      const answer = await this.send("GET", "logo", {}, signal, async (req) => {
        req.end();
      }, maxBytes);
      if (answer.status === 404) return null;
      if (answer.status === 200 && answer.bytes.length > maxBytes) throw new CallbackError(`the logo is over ${maxBytes} bytes`, 200);
      if (answer.status === 409 || answer.status >= 300 || answer.status < 200) {
        this.parse(answer, CallbackAck); // throws the matching error (409 silences the job)
      }
      return { bytes: answer.bytes, contentType: answer.contentType ?? "" };
    });
  }

  /**
   * Reads the account's cookies file for the platform of the job's video
   * from the job channel, or null when there is none (404) or the Worker's
   * token does not open the route (401: a Worker from before cookies existed).
   * The text is written to the job's work directory for yt-dlp only; it is
   * never logged.
   */
  async getCookies(maxBytes: number): Promise<string | null> {
    return this.withRetries(async (signal) => {
      const answer = await this.send("GET", "cookies", {}, signal, async (req) => {
        req.end();
      }, maxBytes);
      if (answer.status === 404 || answer.status === 401) return null;
      if (answer.status === 200 && answer.bytes.length > maxBytes) throw new CallbackError(`the cookies file is over ${maxBytes} bytes`, 200);
      if (answer.status === 409 || answer.status >= 300 || answer.status < 200) {
        this.parse(answer, CallbackAck); // throws the matching error (409 silences the job)
      }
      return answer.bytes.toString("utf8");
    });
  }

  /**
   * PUTs a file streamed from disk; onBytes sees each chunk's size as it goes
   * out. `stop` ends the upload (and its retries) at once with its reason: the
   * clip pipeline stops an upload when a render fails.
   */
  async putFile(suffix: string, path: string, contentType: string, onBytes?: (bytes: number) => void, stop?: AbortSignal): Promise<void> {
    const size = (await stat(path)).size;
    let sentInEarlierAttempts = 0;
    await this.withRetries(async (signal) => {
      let sent = 0;
      // A retry starts the file over; progress callers only ever see growth.
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          sent += chunk.length;
          if (sent > sentInEarlierAttempts) {
            onBytes?.(Math.min(chunk.length, sent - sentInEarlierAttempts));
            sentInEarlierAttempts = sent;
          }
          callback(null, chunk);
        },
      });
      const answer = await this.send("PUT", suffix, { "content-type": contentType, "content-length": String(size) }, signal, async (req) => {
        await pipeline(createReadStream(path, { highWaterMark: UPLOAD_READ_BYTES }), counter, req);
      });
      return this.parse(answer, CallbackAck);
    }, stop);
  }

  private postJson<S extends z.ZodType>(suffix: string, body: unknown, schema: S): Promise<z.infer<S>> {
    const payload = Buffer.from(JSON.stringify(body));
    return this.withRetries(async (signal) => {
      const answer = await this.send(
        "POST",
        suffix,
        { "content-type": "application/json", "content-length": String(payload.length) },
        signal,
        async (req) => {
          req.end(payload);
        },
      );
      return this.parse(answer, schema);
    });
  }

  private parse<S extends z.ZodType>(answer: RawAnswer, schema: S): z.infer<S> {
    if (answer.status === 409) {
      this.silenceNow();
      this.opts.onInactive();
      throw new JobAborted("inactive");
    }
    if (answer.status === 503 && problemCode(answer.body) === COMPLETION_IN_PROGRESS) throw new StillCompleting();
    if (answer.status >= 500) throw new RetryableError(`callback answered HTTP ${answer.status}`);
    if (answer.status < 200 || answer.status >= 300) {
      throw new CallbackError(`callback answered HTTP ${answer.status}: ${answer.body.slice(0, 200)}`, answer.status);
    }
    let json: unknown;
    try {
      json = JSON.parse(answer.body);
    } catch {
      throw new CallbackError("callback answered a body that is not JSON", answer.status);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new CallbackError("callback answered an unexpected body", answer.status);
    return parsed.data;
  }

  private async withRetries<T>(attempt: (signal: AbortSignal) => Promise<T>, stop?: AbortSignal): Promise<T> {
    const ended = stop ? AbortSignal.any([this.silence.signal, stop]) : this.silence.signal;
    let inProgressAnswers = 0;
    for (let n = 1; ; n += 1) {
      if (this.silence.signal.aborted) throw new JobAborted("inactive");
      stop?.throwIfAborted();
      const signal = AbortSignal.any([ended, AbortSignal.timeout(this.opts.timeoutMs)]);
      try {
        return await attempt(signal);
      } catch (error) {
        if (this.silence.signal.aborted || error instanceof JobAborted) throw new JobAborted("inactive");
        stop?.throwIfAborted();
        if (error instanceof StillCompleting && inProgressAnswers < MAX_IN_PROGRESS_ANSWERS) {
          inProgressAnswers += 1;
          n -= 1; // progress, not a failed attempt
          await sleep(this.opts.retryBaseMs, ended);
          continue;
        }
        const retryable = !(error instanceof CallbackError);
        if (!retryable || n >= this.opts.attempts) throw error;
        const delay = this.opts.retryBaseMs * 2 ** (n - 1) * (0.75 + Math.random() * 0.5);
        await sleep(delay, ended);
      }
    }
  }

  private send(
    method: "POST" | "PUT" | "GET",
    suffix: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    writeBody: (req: http.ClientRequest) => Promise<void>,
    maxBytes = ANSWER_BYTES,
  ): Promise<RawAnswer & { contentType?: string }> {
    const url = new URL(callbackUrl(this.opts.callbackBase, this.opts.jobId, suffix));
    const transport = url.protocol === "https:" ? https : http;
    return new Promise<RawAnswer & { contentType?: string }>((resolve, reject) => {
      const req = transport.request(url, {
        method,
        headers: { ...headers, authorization: `Bearer ${this.opts.token}` },
        signal,
      });
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on("data", (chunk: Buffer) => {
          // Keep at most maxBytes (+1, so a longer answer shows) of whatever arrives.
          if (kept <= maxBytes) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, body: bytes.subarray(0, ANSWER_BYTES).toString("utf8"), bytes, contentType: res.headers["content-type"] });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      writeBody(req).catch(reject);
    });
  }
}
