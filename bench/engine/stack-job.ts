/**
 * One job as a client sees it, on the real local stack (the Worker under
 * `wrangler dev`, the engine process, ffmpeg): POST /api/v1/jobs, then GET
 * the job until it is completed. The job's stages come from the Worker's
 * completion log line (src/engine/stage-timings.ts), CPU from /proc for the
 * Worker's and the engine's process trees.
 *
 * The client asks with `Prefer: wait=60` (src/jobs/held-read.ts): each GET
 * is held by the Worker until the job ends or a minute passes, so the end is
 * seen the moment it commits, and a 150 s job costs the local Worker three or
 * so answers instead of hundreds of polls (each about 7 ms of CPU on the 2
 * cores the engine renders on). An answer the Worker did not hold (no
 * Preference-Applied) is followed by UNHELD_POLL_MS before the next GET, so
 * a Worker that cannot hold reads is polled rather than hammered; such
 * answers are counted (`unheldPolls`). `completedSeenAfterMs` is how long
 * after the job's completed_at (the Worker's clock, the same machine) the
 * client saw it: a slow answer or a late status shows there.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { loadavg } from "node:os";
import { FINAL_STATUSES, type ApiClient, type JobView } from "../../scripts/local-stack/api-client.ts";
import type { LocalStack } from "../../scripts/local-stack/stack.ts";
import { liveTreeCpuSeconds } from "./cpu.ts";

/** Seconds each GET may be held (the API's most). */
export const HELD_WAIT_SECONDS = 60;
/** The pause after an answer the Worker did not hold. */
export const UNHELD_POLL_MS = 1000;

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
  /** GETs the client sent (each held until the job ended or HELD_WAIT_SECONDS passed). */
  polls: number;
  /** Of those, answers the Worker did not hold: each was followed by UNHELD_POLL_MS, so the end may be seen that late (0 expected). */
  unheldPolls: number;
  /** From the job's completed_at to the client holding the answer that showed it: how late the end was seen. */
  completedSeenAfterMs: number;
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
  let polls = 0;
  let unheldPolls = 0;
  let job: JobView;
  for (;;) {
    const answer = await client.getJobWhenEnded(submitted.job_id, HELD_WAIT_SECONDS);
    job = answer.job;
    polls += 1;
    if (FINAL_STATUSES.includes(job.status)) break;
    if (performance.now() - started > timeoutMs) throw new Error(`job ${submitted.job_id} did not finish within ${Math.round(timeoutMs / 1000)} s (last ${job.status}, ${job.step ?? ""})`);
    // A held answer that is not final ran out its minute: ask again at once.
    if (!answer.held) {
      unheldPolls += 1;
      await new Promise((resolve) => setTimeout(resolve, UNHELD_POLL_MS));
    }
  }
  const clientSeconds = (performance.now() - started) / 1000;
  const seenAtMs = Date.now();
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
    polls,
    unheldPolls,
    completedSeenAfterMs: job.completed_at ? seenAtMs - Date.parse(job.completed_at) : NaN,
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
