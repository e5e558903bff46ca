/**
 * The jobs queue consumer's part for a clip edit (a JobMessage with
 * `edit_id`): the edit goes queued -> rendering only when no other edit of
 * its job renders, then a StartJob with `clip_edit`, the effective
 * configuration and the edit's own token goes to the job's engine instance.
 * No engine took it: back to queued and tried again later, until the edit's
 * timeout (then failed, nothing charged); refused by the engine: failed.
 */
import { StartJob, StartJobAccepted, type StartJob as StartJobBody } from "#contract";
import { findEdit, markRendering, revertToQueued, type ClipEditRow } from "../db/clip-edits.ts";
import { findJob, type Job } from "../db/jobs.ts";
import { classifyStartAnswer, EngineStartError, engineHosts } from "../fleet/engine-host.ts";
import { EDIT_RETRY_DELAY_SECONDS as RETRY_DELAY_SECONDS, EDIT_TIMEOUT_MS, enqueueEdit, failPendingEdit } from "../jobs/clip-edit/dispatch.ts";
import { engineConfigProblem, engineLimits, EngineMisconfiguredError, tokenTtlSeconds } from "../settings.ts";
import { grantedScopes } from "./scopes.ts";
import { signEngineToken } from "./token.ts";

const START_TIMEOUT_MS = 30_000;

/** The edit's token: the job's id, the scopes the job was granted, and the edit's id (callbacks.ts tells it apart by that). */
function editToken(env: Env, job: Job, edit: ClipEditRow, nowMs = Date.now()): Promise<string> {
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
