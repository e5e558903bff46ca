/**
 * An accepted edit's way to the engine. The edit holds an active-job slot in
 * the account's Durable Object from acceptance to its end (its id stands for
 * a job there), and travels on the jobs queue as a JobMessage with
 * `edit_id`. The consumer starts it on the job's engine instance with a
 * StartJob carrying `clip_edit`, the effective configuration and the edit's
 * own token; edits of one job run one after another (a message for an edit
 * whose job already renders one comes back later, and each end starts the
 * next queued edit).
 */
import { StartJob, StartJobAccepted, type StartJob as StartJobBody } from "#contract";
import { accountState } from "../../account/stub";
import { findEdit, markRendering, queuedEditsOfJob, revertToQueued, failEdit, type ClipEditRow } from "../../db/clip-edits";
import { findJob, type Job } from "../../db/jobs";
import { grantedScopes } from "../../engine/scopes";
import { signEngineToken } from "../../engine/token";
import { classifyStartAnswer, EngineStartError, engineHosts } from "../../fleet/engine-host";
import { AppError } from "../../http/errors";
import type { JobMessage } from "../../queue/message";
import { engineConfigProblem, engineLimits, EngineMisconfiguredError, tokenTtlSeconds } from "../../settings";

/** A pending edit that has not ended this long after it last moved is failed by the sweep (processing_timeout). */
export const EDIT_TIMEOUT_MS = 30 * 60_000;
/** How long a message waits before it looks again at a job that renders another edit, or at an engine that did not start. */
const RETRY_DELAY_SECONDS = 5;
const START_TIMEOUT_MS = 30_000;

/** The edit's active-job slot: 409 active_job_limit when the account's active jobs and edits fill its plan. */
export async function acquireEditSlot(env: Env, accountId: string, editId: string, maxActive: number): Promise<void> {
  const slot = await accountState(env, accountId).acquireSlot(editId, maxActive);
  if (!slot.ok) {
    throw new AppError("active_job_limit", "The account already has an active job or clip edit.", { extra: { active_job_id: slot.activeJobId } });
  }
}

export async function releaseEditSlot(env: Env, accountId: string, editId: string): Promise<void> {
  try {
    await accountState(env, accountId).releaseSlot(editId);
  } catch (err) {
    // A slot left held is freed by the next submission's stale check (submit.ts), which asks D1 about the edit.
    console.error(`releasing the slot of ${editId} failed`, err);
  }
}

export async function enqueueEdit(env: Env, edit: Pick<ClipEditRow, "id" | "jobId" | "accountId">, delaySeconds = 0): Promise<void> {
  await env.JOBS.send({ job_id: edit.jobId, account_id: edit.accountId, edit_id: edit.id } satisfies JobMessage, delaySeconds > 0 ? { delaySeconds } : {});
}

/** The job's next queued edit goes to the engine (called when one ends). */
export async function startNextEdit(env: Env, jobId: string): Promise<void> {
  const [next] = await queuedEditsOfJob(env.DB, jobId);
  if (next) await enqueueEdit(env, next);
}

/** The edit's token: the job's id, the scopes the job was granted, and the edit's id (callbacks.ts tells it apart by that). */
export function editToken(env: Env, job: Job, edit: ClipEditRow, nowMs = Date.now()): Promise<string> {
  return signEngineToken(env.CALLBACK_TOKEN_SECRET, job.id, grantedScopes({ ...job, config: edit.config }), tokenTtlSeconds(env), nowMs, edit.id);
}

async function startOnEngine(env: Env, job: Job, edit: ClipEditRow): Promise<void> {
  const problem = engineConfigProblem(env);
  if (problem) throw new EngineMisconfiguredError(problem);
  const body: StartJobBody = StartJob.parse({
    job_id: job.id,
    token: await editToken(env, job, edit),
    video_url: job.videoUrl,
    source: job.uploadId !== null ? "upload" : "url",
    video_type: job.videoType,
    config: edit.config,
    limits: engineLimits(env),
    captions_url: null,
    time_range: null,
    clip_edit: edit.clipEdit,
  });
  let response: Response;
  try {
    response = await engineHosts.select(env).start(job.id, "/jobs", JSON.stringify(body), START_TIMEOUT_MS);
  } catch (err) {
    throw new EngineStartError("unreachable", `engine unreachable: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!response.ok) throw classifyStartAnswer(response.status, await response.text().catch(() => ""));
  if (!StartJobAccepted.safeParse(await response.json().catch(() => null)).success) {
    throw new EngineStartError("engine_error", "engine answered StartJob with an unexpected body");
  }
}

/** An edit that ended (published or failed): its slot goes back and the job's next edit starts. */
export async function editEnded(env: Env, edit: Pick<ClipEditRow, "id" | "jobId" | "accountId">): Promise<void> {
  await releaseEditSlot(env, edit.accountId, edit.id);
  await startNextEdit(env, edit.jobId);
}

/** Fails a pending edit (credits back) and lets the next one go. */
export async function failPendingEdit(env: Env, edit: ClipEditRow, error: { code: string; message: string }): Promise<boolean> {
  const failed = await failEdit(env.DB, edit, error, new Date().toISOString());
  if (failed) await editEnded(env, edit);
  return failed;
}

/** The consumer's part for a message with `edit_id`. */
export async function handleEditMessage(env: Env, editId: string): Promise<void> {
  const edit = await findEdit(env.DB, editId);
  if (!edit || edit.status !== "queued") return;
  const job = await findJob(env.DB, edit.jobId);
  if (!job || job.status !== "completed") {
    await failPendingEdit(env, edit, { code: "internal_error", message: "The job is no longer available; nothing was charged." });
    return;
  }
  if (!(await markRendering(env.DB, edit.id, new Date().toISOString()))) {
    // Another edit of the job renders: look again later (its end also sends this one).
    await enqueueEdit(env, edit, RETRY_DELAY_SECONDS);
    return;
  }
  try {
    await startOnEngine(env, job, edit);
  } catch (err) {
    if (!(err instanceof EngineStartError) && !(err instanceof EngineMisconfiguredError)) throw err;
    const message = err instanceof Error ? err.message : String(err);
    if ((err instanceof EngineStartError && err.kind === "refused") || Date.now() - Date.parse(edit.createdAt) > EDIT_TIMEOUT_MS) {
      await failPendingEdit(env, edit, { code: "internal_error", message: `No clip engine took the edit; nothing was charged. (${message})` });
      return;
    }
    console.warn(`starting edit ${edit.id} failed, retrying: ${message}`);
    await revertToQueued(env.DB, edit.id, new Date().toISOString());
    await enqueueEdit(env, edit, RETRY_DELAY_SECONDS);
  }
}
