import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  ENGINE_SIGNATURE_HEADER,
  importVerifyKey,
  StartJob,
  verifyEngineRequest,
  type EngineHealth,
  type StartJobAccepted,
} from "#contract";
import type { EngineConfig } from "../shared/config.ts";
import { JobAborted, errorMessage } from "../shared/errors.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { isClipEdit, runClipEdit } from "../clip-edit/run.ts";
import { runJob, type JobDeps, type JobOutcome } from "../job/run.ts";
import { log } from "../shared/log.ts";
import { ReplayLedger } from "./replay.ts";

/**
 * The engine's HTTP server: direction 1 of the contract (Worker -> engine).
 * Each job gets its own AbortController, reporter and work directory; the
 * only shared state is the table of running jobs, keyed by job id, and by job
 * id and edit id for a clip edit (clip-edit/), so an edit runs while its
 * job's id is known here and a repeat of either is not started twice. A
 * cancel of a job id stops the job and its edits. StartJob and cancel are
 * accepted only with a fresh Ed25519 signature that ENGINE_VERIFY_KEY (the
 * Worker's public key) verifies, and only once (replay.ts): a forged request
 * gets 401, a replayed one 409, and neither starts, fetches or stops anything.
 */
export interface EngineServerOptions {
  config: EngineConfig;
  runner: FfmpegRunner;
  /** Tests only: source download address rule and resolver. */
  policy?: JobDeps["policy"];
  resolver?: JobDeps["resolver"];
  speechModel?: JobDeps["speechModel"];
}

interface RunningJob {
  jobId: string;
  controller: AbortController;
  done: Promise<JobOutcome>;
}

export interface EngineServer {
  server: http.Server;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Refuses new jobs, fails running ones with a report, waits for their cleanup. */
  shutdown(): Promise<void>;
  activeJobs(): number;
  /** Whether a run of this job (the job itself or one of its clip edits) is still in flight. */
  isRunning(jobId: string): boolean;
}

const MAX_BODY_BYTES = 64 * 1024;

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

function sendProblem(res: http.ServerResponse, status: number, code: string, detail: string, extra: Record<string, unknown> = {}): void {
  const payload = JSON.stringify({ type: "about:blank", title: http.STATUS_CODES[status] ?? "Error", status, code, detail, ...extra });
  res.writeHead(status, { "content-type": "application/problem+json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(tooLarge ? null : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function signatureOf(req: http.IncomingMessage): string | null {
  const value = req.headers[ENGINE_SIGNATURE_HEADER.toLowerCase()];
  return typeof value === "string" ? value : null;
}

/** How a signed request was judged: accepted, or the answer to send instead. */
type Verdict = { ok: true } | { ok: false; status: 401 | 409; code: string; detail: string };

export function createEngineServer(opts: EngineServerOptions): EngineServer {
  const jobs = new Map<string, RunningJob>();
  let shuttingDown = false;
  const ledger = new ReplayLedger();
  const verifyKey = importVerifyKey(opts.config.engineVerifyKey);
  // An unusable key refuses every request (loadConfig already refused to start with one).
  verifyKey.catch(() => undefined);

  /** A fresh signature of this exact request, by the Worker, never seen before. */
  const judge = async (req: http.IncomingMessage, path: string, body: string, what: string): Promise<Verdict> => {
    const verified = await verifyEngineRequest(await verifyKey, signatureOf(req), { method: "POST", path, body });
    if (!verified.ok) return { ok: false, status: 401, code: "unauthorized", detail: `${what} needs a valid Engine-Signature.` };
    if (!ledger.accept(verified.nonce, verified.timestamp)) {
      return { ok: false, status: 409, code: "replayed", detail: `This signed ${what} was already accepted once; a request is accepted only once.` };
    }
    return { ok: true };
  };

  const startJob = (job: StartJob): StartJobAccepted => {
    const key = job.clip_edit ? `${job.job_id}/${job.clip_edit.edit_id}` : job.job_id;
    if (jobs.has(key)) return { job_id: job.job_id, started: false };
    const controller = new AbortController();
    const deps: JobDeps = { runner: opts.runner, config: opts.config, policy: opts.policy, resolver: opts.resolver, speechModel: opts.speechModel };
    const run = isClipEdit(job) ? runClipEdit(job, deps, controller) : runJob(job, deps, controller);
    const done = run
      .catch((error: unknown) => {
        log.error("job_crashed", { job_id: job.job_id, edit_id: job.clip_edit?.edit_id, error: errorMessage(error) });
        return "failed" as const;
      })
      .finally(() => jobs.delete(key));
    jobs.set(key, { jobId: job.job_id, controller, done });
    return { job_id: job.job_id, started: true };
  };

  const handleStart = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (shuttingDown) return sendProblem(res, 503, "shutting_down", "The engine is shutting down and takes no new jobs.");
    const text = await readBody(req);
    if (text === null) return sendProblem(res, 413, "payload_too_large", `Body over ${MAX_BODY_BYTES} bytes.`);
    const verdict = await judge(req, "/jobs", text, "StartJob").catch((): Verdict => ({ ok: false, status: 401, code: "unauthorized", detail: "StartJob needs a valid Engine-Signature." }));
    if (!verdict.ok) {
      log.warn(verdict.status === 409 ? "start_refused_replayed" : "start_refused_unsigned", {});
      return sendProblem(res, verdict.status, verdict.code, verdict.detail);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return sendProblem(res, 400, "invalid_request", "Body is not JSON.");
    }
    const parsed = StartJob.safeParse(json);
    if (!parsed.success) {
      const errors = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
      return sendProblem(res, 400, "invalid_request", "Body is not a valid StartJob.", { errors });
    }
    const accepted = startJob(parsed.data);
    log.info(accepted.started ? "job_accepted" : "job_already_running", { job_id: accepted.job_id, edit_id: parsed.data.clip_edit?.edit_id });
    sendJson(res, 202, accepted);
  };

  const handleCancel = async (req: http.IncomingMessage, res: http.ServerResponse, jobId: string, path: string) => {
    const text = await readBody(req);
    const unsigned: Verdict = { ok: false, status: 401, code: "unauthorized", detail: "Cancel needs a valid Engine-Signature." };
    const verdict = text === null ? unsigned : await judge(req, path, text, "cancel").catch((): Verdict => unsigned);
    if (!verdict.ok) return sendProblem(res, verdict.status, verdict.code, verdict.detail);
    // The job and any edit of it running here.
    const running = [...jobs.values()].filter((j) => j.jobId === jobId);
    if (running.length === 0) return sendProblem(res, 404, "not_found", "No such job is running here.");
    for (const run of running) if (!run.controller.signal.aborted) run.controller.abort(new JobAborted("canceled"));
    log.info("job_cancel_requested", { job_id: jobId });
    sendJson(res, 202, { job_id: jobId, canceled: true });
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://engine.local");
    const path = url.pathname;
    const cancelMatch = /^\/jobs\/([^/]+)\/cancel$/.exec(path);
    const route = async () => {
      if (path === "/health") {
        if (req.method !== "GET" && req.method !== "HEAD") return sendProblem(res, 405, "method_not_allowed", "Use GET.");
        const health: EngineHealth = { ok: true, backend: opts.runner.backend, active_jobs: jobs.size };
        return sendJson(res, 200, health);
      }
      if (path === "/jobs") {
        if (req.method !== "POST") return sendProblem(res, 405, "method_not_allowed", "Use POST.");
        return handleStart(req, res);
      }
      if (cancelMatch?.[1]) {
        if (req.method !== "POST") return sendProblem(res, 405, "method_not_allowed", "Use POST.");
        return handleCancel(req, res, decodeURIComponent(cancelMatch[1]), path);
      }
      req.resume();
      return sendProblem(res, 404, "not_found", "No such route.");
    };
    route().catch((error: unknown) => {
      log.error("request_failed", { path, error: errorMessage(error) });
      if (!res.headersSent) sendProblem(res, 500, "internal_error", "Unexpected error.");
      else res.destroy();
    });
  });

  return {
    server,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    async shutdown() {
      shuttingDown = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const running = [...jobs.values()];
      for (const job of running) {
        if (!job.controller.signal.aborted) job.controller.abort(new JobAborted("shutdown"));
      }
      await Promise.all(running.map((j) => j.done));
      server.closeIdleConnections();
      await closed;
    },
    activeJobs: () => jobs.size,
    isRunning: (jobId) => [...jobs.values()].some((j) => j.jobId === jobId),
  };
}
