/**
 * One job as a client sees it, on the real local stack (the Worker under
 * `wrangler dev`, the engine process, ffmpeg): POST /api/v1/jobs, then GET
 * the job until it is completed. The job's stages come from the Worker's
 * completion log line (src/engine/stage-timings.ts), CPU from /proc for the
 * Worker's and the engine's process trees.
 *
 * Polling as a careful client would: every SLOW_POLL_MS while the job's own
 * step says the end is still at least one clip's render away (downloading,
 * analysing, rendering clips before the last), every FAST_POLL_MS from the
 * moment the step names the last clip (or anything after the renders, or a
 * step this client does not know). Polling every 100 ms for the whole job
 * cost the local Worker about 14 s of CPU in a 114 s job, on the 2 cores the
 * engine renders on, which slowed the job it measured. The end is still seen
 * within FAST_POLL_MS; `completedSeenIntervalMs` says which interval was in force
 * when it was (a slow one would be printed as such).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { loadavg } from "node:os";
import type { ApiClient } from "../../scripts/local-stack/api-client.ts";
import { FINAL_STATUSES, type JobView } from "../../scripts/local-stack/api-types.ts";
import type { LocalStack } from "../../scripts/local-stack/stack.ts";
import { liveTreeCpuSeconds } from "./cpu.ts";

/** How often the client asks near the end: the most the job's end can be seen late by. */
export const FAST_POLL_MS = 100;
/** How often it asks while at least one more clip must render after the ones running. */
export const SLOW_POLL_MS = 1000;

/** Steps of the engine (container/src/job.ts) far enough from the end to poll slowly. */
const EARLY_STEP = /^(Starting|Queued|Waiting|Downloading|Probing|Analy[sz]ing|Transcribing|Translating|Preparing)/i;
const RENDERING_STEP = /^Rendering clips? ([\d, and]+) of (\d+)/i;

/** Whether the job, as its last answer shows it, may complete within one slow interval. */
export function nearTheEnd(job: Pick<JobView, "status" | "step">): boolean {
  if (job.status === "queued") return false;
  const step = job.step ?? "";
  if (EARLY_STEP.test(step)) return false;
  const rendering = RENDERING_STEP.exec(step);
  if (rendering) {
    const last = Number(rendering[2]);
    const running = (rendering[1]!.match(/\d+/g) ?? []).map(Number);
    return running.includes(last);
  }
  return true;
}

export interface Stage {
  stage: string;
  start_ms: number;
  end_ms: number;
}

export interface StackJobFigures {
  jobId: string;
  job: JobView;
  /** Submission (the POST sent) to the GET that first saw `completed`. */
  clientSeconds: number;
  /** From the Worker's completion line: every stage, ms from submission (the job's created_at). */
  stages: Stage[];
  /** The Worker's submission to completion committed. */
  workerTotalSeconds: number;
  /** CPU of the engine's process tree (engine and ffmpeg) and of the Worker's (wrangler, workerd) during the job. */
  engineCpuSeconds: number;
  workerCpuSeconds: number;
  /** The longest time between two answers to the client's GETs: a long one means the client saw the end late (a slow GET, not the job). */
  longestPollGapSeconds: number;
  /** GETs the client sent, and when it switched to FAST_POLL_MS (seconds from submission; null: never). */
  polls: number;
  fastPollingFromSeconds: number | null;
  /** The interval in force when `completed` was first seen: the resolution of clientSeconds. */
  completedSeenIntervalMs: number;
  loadBefore: number;
  loadAfter: number;
}

interface CompletionLine {
  event: string;
  job_id: string;
  total_ms: number;
  stages: Stage[];
}

/** The Worker's job_completed line for the job (wrangler dev writes the Worker's console to its log). */
export async function completionLine(stack: LocalStack, jobId: string): Promise<CompletionLine | null> {
  const log = await readFile(path.join(stack.logsDir, "worker.log"), "utf8").catch(() => "");
  for (const line of log.split("\n")) {
    if (!line.includes('"job_completed"') || !line.includes(jobId)) continue;
    const parsed = JSON.parse(line.slice(line.indexOf("{"))) as CompletionLine;
    if (parsed.event === "job_completed" && parsed.job_id === jobId) return parsed;
  }
  return null;
}

function treeCpu(stack: LocalStack): { engine: number; worker: number } {
  const pids = stack.pids();
  return { engine: pids.engine ? liveTreeCpuSeconds(pids.engine) : 0, worker: liveTreeCpuSeconds(pids.worker) };
}

export async function runStackJob(
  stack: LocalStack,
  client: ApiClient,
  submission: { video_url: string; video_type: string; config_name?: string },
  timeoutMs = 3 * 3600_000,
): Promise<StackJobFigures> {
  const loadBefore = loadavg()[0] ?? 0;
  const cpuBefore = treeCpu(stack);
  const started = performance.now();
  const submitted = await client.submit(submission);
  let lastAnswer = performance.now();
  let longestGap = 0;
  let polls = 0;
  let fastFrom: number | null = null;
  let interval = SLOW_POLL_MS;
  let job: JobView;
  for (;;) {
    job = await client.getJob(submitted.job_id);
    polls += 1;
    const now = performance.now();
    longestGap = Math.max(longestGap, now - lastAnswer);
    lastAnswer = now;
    if (FINAL_STATUSES.includes(job.status)) break;
    if (now - started > timeoutMs) throw new Error(`job ${submitted.job_id} did not finish within ${Math.round(timeoutMs / 1000)} s (last ${job.status}, ${job.step ?? ""})`);
    // Decided on each answer; fastFrom is where the last fast streak began (the one the end is seen in).
    const near = nearTheEnd(job);
    if (near && fastFrom === null) fastFrom = now;
    if (!near) fastFrom = null;
    interval = near ? FAST_POLL_MS : SLOW_POLL_MS;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
  const clientSeconds = (performance.now() - started) / 1000;
  const cpuAfter = treeCpu(stack);
  if (job.status !== "completed") throw new Error(`job ${job.job_id} ended ${job.status}: ${JSON.stringify(job.error ?? null)} (logs in ${stack.logsDir})`);
  // The line is written as the completion commits; the log file may lag the response by a moment.
  let line: CompletionLine | null = null;
  for (let tries = 0; tries < 50 && !line; tries++) {
    line = await completionLine(stack, job.job_id);
    if (!line) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!line) throw new Error(`no job_completed line for ${job.job_id} in ${stack.logsDir}/worker.log`);
  return {
    jobId: job.job_id,
    job,
    clientSeconds,
    stages: line.stages,
    workerTotalSeconds: line.total_ms / 1000,
    engineCpuSeconds: cpuAfter.engine - cpuBefore.engine,
    workerCpuSeconds: cpuAfter.worker - cpuBefore.worker,
    longestPollGapSeconds: longestGap / 1000,
    polls,
    fastPollingFromSeconds: fastFrom === null ? null : (fastFrom - started) / 1000,
    completedSeenIntervalMs: interval,
    loadBefore,
    loadAfter: loadavg()[0] ?? 0,
  };
}

/** Seconds of a stage (0 when absent). */
export function stageSeconds(stages: Stage[], name: string): number {
  const s = stages.find((x) => x.stage === name);
  return s ? (s.end_ms - s.start_ms) / 1000 : 0;
}

/**
 * The waterfall: one bar per stage on a common time axis from submission to
 * the client seeing `completed`, renders and uploads grouped by clip.
 */
export function waterfall(figures: StackJobFigures, width = 64): string {
  const endMs = figures.clientSeconds * 1000;
  const scale = (ms: number) => Math.max(0, Math.min(width, Math.round((ms / endMs) * width)));
  const rows = [...figures.stages, { stage: "completed (client sees)", start_ms: endMs, end_ms: endMs }];
  const label = Math.max(...rows.map((r) => r.stage.length));
  const lines = rows.map((r) => {
    const from = scale(r.start_ms);
    const to = Math.max(from + 1, scale(r.end_ms));
    const bar = " ".repeat(from) + "#".repeat(Math.min(width + 1, to) - from);
    const times = `${(r.start_ms / 1000).toFixed(2).padStart(7)} ${(r.end_ms / 1000).toFixed(2).padStart(7)} ${((r.end_ms - r.start_ms) / 1000).toFixed(2).padStart(6)}`;
    return `${r.stage.padEnd(label)} ${times}  |${bar.padEnd(width + 1)}|`;
  });
  return [`${"stage".padEnd(label)}   start     end    dur  (seconds from submission)`, ...lines].join("\n");
}
