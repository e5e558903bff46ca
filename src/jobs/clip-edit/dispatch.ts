/**
 * An accepted edit's way to the engine (the consumer's part is
 * src/engine/edit-dispatch.ts). The edit holds an active-job slot in
 * the account's Durable Object from acceptance to its end (its id stands for
 * a job there), and travels on the jobs queue as a JobMessage with
 * `edit_id`. The consumer starts it on the job's engine instance with a
 * StartJob carrying `clip_edit`, the effective configuration and the edit's
 * own token; edits of one job run one after another (a message for an edit
 * whose job already renders one comes back later, and each end starts the
 * next queued edit).
 */
import { accountState } from "../../account/stub.ts";
import { failEdit, queuedEditsOfJob, type ClipEditRow } from "../../db/clip-edits.ts";
import { DomainError } from "../../domain/errors.ts";
import type { JobMessage } from "../../fleet/job-message.ts";

/** A pending edit that has not ended this long after it last moved is failed by the sweep (processing_timeout). */
export const EDIT_TIMEOUT_MS = 30 * 60_000;
/** How long a message waits before it looks again at a job that renders another edit, or at an engine that did not start. */
export const EDIT_RETRY_DELAY_SECONDS = 5;

/** The edit's active-job slot: 409 active_job_limit when the account's active jobs and edits fill its plan. */
export async function acquireEditSlot(env: Env, accountId: string, editId: string, maxActive: number): Promise<void> {
  const slot = await accountState(env, accountId).acquireSlot(editId, maxActive);
  if (!slot.ok) {
    throw new DomainError("active_job_limit", "The account already has an active job or clip edit.", { extra: { active_job_id: slot.activeJobId } });
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

