/**
 * An edit's end (docs/editing.md). Published: the new version's objects are
 * made public under the version's own keys (publication.ts), then one D1
 * batch charges the reservation, marks the edit published, replaces the clip
 * row and writes the clip.updated / clip.created event; only after it commits
 * are the previous version's objects deleted, the job's cached view dropped
 * and the event dispatched. Failed: the reservation goes back and the
 * published version stays. Either way the edit's staged uploads go and the
 * job's next edit starts.
 */
import type { ClipReport } from "#contract";
import { accountState } from "../../account/stub.ts";
import { clipEventStatement, ensurePublicationKey, findEdit, publishEditStatements, type ClipEditRow } from "../../db/clip-edits.ts";
import { listClips, writeEditedClip, type Clip } from "../../db/clips.ts";
import type { Job } from "../../db/jobs.ts";
import { DomainError } from "../../domain/errors.ts";
import { dispatchJobEvents, newTransitionId } from "../outbox.ts";
import { deleteStaged } from "../job-objects.ts";
import { presentClip } from "../present.ts";
import { newPublicationKey, publishedKeys, publishStaged, type PublishedClip } from "../publication.ts";
import { deleteKeys, stagedKey, type StagedKind } from "../storage.ts";
import { editEnded, failPendingEdit } from "./dispatch.ts";

/** Where an edit's uploads wait: under the job's staging prefix, so deleting the job removes them too. */
export function editStagingId(edit: Pick<ClipEditRow, "jobId" | "id">): string {
  return `${edit.jobId}/${edit.id}`;
}

/** The staged keys the edit's one clip needs before it can be published. */
export function editStagedKeys(edit: Pick<ClipEditRow, "jobId" | "id">, clip: Pick<ClipReport, "index" | "sidecars">): string[] {
  const kinds: StagedKind[] = clip.sidecars ? ["clip", "thumbnail", "vtt", "srt"] : ["clip", "thumbnail"];
  return kinds.map((kind) => stagedKey(editStagingId(edit), clip.index, kind));
}

/** The job's publication key (one is set now for a job that completed without clips). */
export async function editPublicationKey(env: Env, jobId: string): Promise<string> {
  const key = await ensurePublicationKey(env.DB, jobId, newPublicationKey());
  if (key === null) throw new DomainError("job_not_active", `Job ${jobId} is no longer available; stop work on it.`);
  return key;
}

function newClipRow(job: Job, edit: ClipEditRow, report: ClipReport, published: PublishedClip, previous: Clip | undefined): Clip {
  // An edit keeps what judged the clip (score, reasons, the model's post); a new clip takes the engine's.
  const judged = previous ?? {
    score: report.score,
    reasons: report.reasons,
    scores: report.scores,
    judgedBy: report.judged_by,
    description: report.description,
    hashtags: report.hashtags,
    promptMatch: report.prompt_match,
  };
  return {
    jobId: job.id,
    index: edit.index,
    objectKey: published.clip,
    thumbnailKey: published.thumbnail,
    vttKey: published.vtt,
    srtKey: published.srt,
    startSeconds: report.start_seconds,
    endSeconds: report.end_seconds,
    score: judged.score,
    reasons: judged.reasons,
    width: report.width,
    height: report.height,
    reframe: report.reframe,
    facesCount: report.faces_count,
    text: report.text,
    title: report.title,
    captionsBurned: report.captions_burned,
    sidecars: report.sidecars,
    promptMatch: judged.promptMatch,
    removed: report.removed,
    zooms: report.zooms,
    durationSeconds: report.duration_seconds ?? null,
    framing: report.framing ?? null,
    scores: judged.scores,
    judgedBy: judged.judgedBy,
    description: judged.description,
    hashtags: judged.hashtags,
    version: edit.version,
    overrides: edit.overrides,
    corrections: edit.corrections,
  };
}

/** The event's data: the clip as published. */
function eventData(env: Env, clip: Clip): Record<string, unknown> {
  const shown = presentClip(env.CDN_URL, clip);
  return {
    job_id: clip.jobId,
    index: clip.index,
    version: clip.version,
    url: shown.url,
    thumbnail_url: shown.thumbnail_url,
    captions: shown.captions,
    start_seconds: shown.start_seconds,
    end_seconds: shown.end_seconds,
    duration_seconds: shown.duration_seconds,
    title: shown.title,
  };
}

/**
 * Publishes the edit's clip. "published" by this call, "already" when an
 * earlier attempt did (the engine's retry), "inactive" when the edit is no
 * longer rendering. Throws StagedObjectMissing when an upload is missing.
 */
export async function publishEdit(env: Env, job: Job, edit: ClipEditRow, report: ClipReport): Promise<"published" | "inactive"> {
  const publicationKey = await editPublicationKey(env, job.id);
  const [published] = await publishedKeys(publicationKey, [report], edit.version);
  if (!published) throw new Error("no published keys");
  const more = await publishStaged(env, editStagingId(edit), [published]);
  if (more === "more") {
    throw new DomainError("completion_in_progress", "The clip is still being published; send the same completion again.", { headers: { "Retry-After": "1" } });
  }
  const previous = (await listClips(env.DB, job.id)).find((clip) => clip.index === edit.index);
  const clip = newClipRow(job, edit, report, published, edit.kind === "edit" ? previous : undefined);
  const eventId = newTransitionId();
  const now = new Date().toISOString();
  const type = edit.kind === "add" ? "clip.created" : "clip.updated";
  const results = await env.DB.batch([
    ...publishEditStatements(env.DB, edit, eventId, now),
    writeEditedClip(env.DB, clip, edit.id, eventId),
    clipEventStatement(env.DB, {
      id: eventId,
      accountId: edit.accountId,
      jobId: job.id,
      editId: edit.id,
      type,
      body: JSON.stringify({ type, timestamp: now, data: eventData(env, clip) }),
      at: now,
    }),
  ]);
  if ((results[2]?.meta.changes ?? 0) === 0) {
    // Not rendering any more. Failed (by the sweep): what this attempt published is nobody's.
    // Published by another attempt (the engine's retry): the same keys are the clip's, and stay.
    const now = await findEdit(env.DB, edit.id);
    if (now?.status !== "published") {
      await deleteKeys(env.CLIPS, [published.clip, published.thumbnail, published.vtt, published.srt].filter((key): key is string => key !== null));
    }
    return "inactive";
  }
  // Committed: the previous version stops answering (its objects go), and reads show the new one at once.
  if (previous && previous.version !== clip.version) {
    const old = [previous.objectKey, previous.thumbnailKey, previous.vttKey, previous.srtKey].filter((key): key is string => key !== null && !Object.values(published).includes(key));
    await deleteKeys(env.CLIPS, old);
  }
  await deleteStaged(env, editStagingId(edit));
  try {
    await accountState(env, edit.accountId).dropFinishedView(job.id);
  } catch (err) {
    console.error(`dropping the cached view of ${job.id} failed`, err);
  }
  await dispatchJobEvents(env, job.id);
  await editEnded(env, edit);
  return "published";
}

/** The edit failed (the engine's report, or the sweep): credits back, the published version stays, its uploads go. */
export async function failEditAndClean(env: Env, edit: ClipEditRow, error: { code: string; message: string }): Promise<boolean> {
  const failed = await failPendingEdit(env, edit, error);
  await deleteStaged(env, editStagingId(edit));
  return failed;
}
