/**
 * The engine channel's routes for a clip edit: the same paths as a job's
 * (src/engine/callbacks.ts), reached with the edit's own token, which names
 * the edit (TokenClaims.edit_id). The job itself is completed, so its own
 * token answers 409 job_not_active there; an edit's token opens exactly its
 * edit's routes while the edit renders, and 409 job_not_active after, which
 * tells the engine to stop.
 *
 * Uploads: the clip at its index only, staged at the version's published key
 * (clip-staging.ts), its thumbnail and caption sidecars in the private bucket
 * under the edit's staging id (publish.ts). The upload job's source is served
 * from the kept upload. The logo, cookies and translation routes are not
 * opened to an edit (the engine renders without them).
 */
import { CompleteReport, FailReport, MAX_CLIP_UPLOAD_BYTES, MAX_ENGINE_REPORT_BYTES, type CallbackAck } from "#contract";
import { parseRange } from "../cdn/range.ts";
import { findEdit, revertToQueued, touchEdit, type ClipEditRow } from "../db/clip-edits.ts";
import { findJob, type Job } from "../db/jobs.ts";
import { looksLikeCaptions } from "./caption-shape.ts";
import { MAX_CAPTIONS_UPLOAD_BYTES, transcribeWav } from "./speech-channel.ts";
import { readBodyCapped } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { DomainError } from "../domain/errors.ts";
import { uploadKey } from "../uploads/ids.ts";
import { dropStagedClip, stageClip } from "../jobs/clip-staging.ts";
import { publishedKey, StagedObjectMissing } from "../jobs/publication.ts";
import { privateBucket, SRT_CONTENT_TYPE, stagedKey, THUMBNAIL_CONTENT_TYPE, VTT_CONTENT_TYPE } from "../jobs/storage.ts";
import { enqueueEdit } from "../jobs/clip-edit/dispatch.ts";
import { editPublicationKey, editStagedKeys, editStagingId, failEditAndClean, publishEdit } from "../jobs/clip-edit/publish.ts";

const ACK: CallbackAck = { ok: true };

function inactive(jobId: string): AppError {
  return new AppError("job_not_active", `The edit of job ${jobId} is no longer rendering; stop work on it.`);
}

/** The edit, rendering, and its job; 409 job_not_active otherwise. */
async function renderingEdit(env: Env, jobId: string, editId: string): Promise<{ edit: ClipEditRow; job: Job }> {
  const edit = await findEdit(env.DB, editId);
  if (!edit || edit.jobId !== jobId || edit.status !== "rendering") throw inactive(jobId);
  const job = await findJob(env.DB, jobId);
  if (!job || job.status !== "completed") throw inactive(jobId);
  return { edit, job };
}

function uploadLength(request: Request, cap: number): number {
  const length = Number(request.headers.get("content-length") ?? Number.NaN);
  if (!Number.isInteger(length) || length <= 0) throw new AppError("invalid_request", "Uploads need a positive Content-Length.");
  if (length > cap) throw new AppError("payload_too_large", `Uploads are limited to ${cap} bytes.`);
  if (!request.body) throw new AppError("invalid_request", "The upload has no body.");
  return length;
}

function indexOf(raw: string, edit: ClipEditRow): number {
  if (!/^\d{1,2}$/.test(raw) || Number(raw) !== edit.index) {
    throw new AppError("invalid_request", `This edit renders clip ${edit.index} only.`, { errors: [{ path: "index", message: `expected ${edit.index}` }] });
  }
  return edit.index;
}

async function readJsonReport(request: Request): Promise<unknown> {
  const bytes = await readBodyCapped(request, MAX_ENGINE_REPORT_BYTES);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new AppError("invalid_request", "The body is not JSON.");
  }
}

function invalid(issues: { path: PropertyKey[]; message: string }[]): AppError {
  return new AppError("invalid_request", "The report does not match the contract.", {
    errors: issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message })),
  });
}

async function complete(env: Env, jobId: string, editId: string, request: Request): Promise<Response> {
  const parsed = CompleteReport.safeParse(await readJsonReport(request));
  if (!parsed.success) throw invalid(parsed.error.issues);
  const current = await findEdit(env.DB, editId);
  // A retried completion whose first answer was lost is answered as the first was.
  if (current?.status === "published" && current.jobId === jobId) return Response.json(ACK);
  const { edit, job } = await renderingEdit(env, jobId, editId);
  const [clip, ...others] = parsed.data.clips;
  if (!clip || others.length > 0 || clip.index !== edit.index) {
    throw new AppError("invalid_request", `An edit completes with exactly one clip, at index ${edit.index}.`);
  }
  const keys = editStagedKeys(edit, clip);
  const heads = await Promise.all(keys.map((key) => privateBucket(env).head(key)));
  const missing = keys.filter((_, i) => heads[i] === null);
  if (missing.length > 0) throw new AppError("invalid_request", `Uploads missing before completion: ${missing.join(", ")}.`);
  try {
    if ((await publishEdit(env, job, edit, clip)) === "inactive") throw inactive(jobId);
  } catch (err) {
    if (err instanceof StagedObjectMissing) throw new AppError("invalid_request", `Uploads missing before completion: ${err.message}.`);
    throw err;
  }
  return Response.json(ACK);
}

async function source(env: Env, request: Request, job: Job): Promise<Response> {
  if (job.uploadId === null) throw new AppError("not_found", `Job ${job.id} has no uploaded source; fetch its video_url.`);
  const key = uploadKey(job.uploadId);
  const meta = await env.UPLOADS.head(key);
  if (!meta) throw new AppError("not_found", `The uploaded source of job ${job.id} is no longer kept.`);
  const range = parseRange(request.headers.get("Range") ?? undefined, meta.size);
  if (range.kind === "unsatisfiable") {
    throw new AppError("range_not_satisfiable", `The source has ${meta.size} bytes.`, { headers: { "Content-Range": `bytes */${meta.size}` } });
  }
  const object = await env.UPLOADS.get(key, range.kind === "range" ? { range: { offset: range.offset, length: range.length } } : {});
  if (!object) throw new AppError("not_found", `The uploaded source of job ${job.id} is no longer kept.`);
  const headers: Record<string, string> = { "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes", "Cache-Control": "no-store", ETag: object.httpEtag };
  if (range.kind === "range") {
    headers["Content-Range"] = `bytes ${range.offset}-${range.offset + range.length - 1}/${meta.size}`;
    headers["Content-Length"] = String(range.length);
    return new Response(object.body, { status: 206, headers });
  }
  headers["Content-Length"] = String(meta.size);
  return new Response(object.body, { status: 200, headers });
}

/** One request of the edit's engine, after the token middleware verified the edit's token for `jobId`. */
export async function editCallback(env: Env, request: Request, jobId: string, editId: string, subpath: string): Promise<Response> {
  const method = request.method.toUpperCase();
  if (method === "POST" && subpath === "complete") return complete(env, jobId, editId, request);
  const { edit, job } = await renderingEdit(env, jobId, editId);
  const now = new Date().toISOString();
  if (method === "POST" && subpath === "progress") {
    await touchEdit(env.DB, edit.id, now);
    return Response.json(ACK);
  }
  if (method === "POST" && subpath === "fail") {
    const parsed = FailReport.safeParse(await readJsonReport(request));
    if (!parsed.success) throw invalid(parsed.error.issues);
    if (!(await failEditAndClean(env, edit, { code: parsed.data.code, message: parsed.data.message }))) throw inactive(jobId);
    return Response.json(ACK);
  }
  if (method === "POST" && subpath === "interrupted") {
    // The engine is being stopped (a redeploy): the edit goes back to the queue.
    await revertToQueued(env.DB, edit.id, now);
    await enqueueEdit(env, edit, 5);
    return Response.json(ACK);
  }
  if ((method === "GET" || method === "HEAD") && subpath === "source") return source(env, request, job);
  // The parts of the span the job never transcribed (ClipEdit.transcribe), within the job's audio allowance.
  if (method === "POST" && subpath === "transcribe") return Response.json(await transcribeWav(env, job, request, () => touchEdit(env.DB, edit.id, now)));
  const clip = /^clips\/([^/]+)$/.exec(subpath);
  if (method === "PUT" && clip) {
    const index = indexOf(clip[1] ?? "", edit);
    const length = uploadLength(request, MAX_CLIP_UPLOAD_BYTES);
    const key = await publishedKey(await editPublicationKey(env, job.id), index, "clip", edit.version);
    await stageClip(env, editStagingId(edit), index, key, request.body!, length);
    // The edit may have ended while the body streamed; its clean-up may have missed this upload.
    if ((await findEdit(env.DB, edit.id))?.status !== "rendering") {
      await dropStagedClip(env, editStagingId(edit), index);
      throw inactive(jobId);
    }
    await touchEdit(env.DB, edit.id, now);
    return Response.json(ACK);
  }
  const thumbnail = /^clips\/([^/]+)\/thumbnail$/.exec(subpath);
  if (method === "PUT" && thumbnail) {
    const index = indexOf(thumbnail[1] ?? "", edit);
    const length = uploadLength(request, MAX_CLIP_UPLOAD_BYTES);
    const sized = new FixedLengthStream(length);
    await Promise.all([
      request.body!.pipeTo(sized.writable),
      privateBucket(env).put(stagedKey(editStagingId(edit), index, "thumbnail"), sized.readable, { httpMetadata: { contentType: THUMBNAIL_CONTENT_TYPE } }),
    ]);
    await touchEdit(env.DB, edit.id, now);
    return Response.json(ACK);
  }
  const captions = /^clips\/([^/]+)\/captions\.(vtt|srt)$/.exec(subpath);
  if (method === "PUT" && captions) {
    const index = indexOf(captions[1] ?? "", edit);
    const format = captions[2] === "vtt" ? "vtt" : "srt";
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(await readBodyCapped(request, MAX_CAPTIONS_UPLOAD_BYTES));
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw new AppError("invalid_request", "Captions must be UTF-8 text.");
    }
    if (!looksLikeCaptions(format, text)) throw new AppError("invalid_request", format === "vtt" ? "The body is not a WebVTT file." : "The body is not a SubRip file.");
    await privateBucket(env).put(stagedKey(editStagingId(edit), index, format), text, {
      httpMetadata: { contentType: format === "vtt" ? VTT_CONTENT_TYPE : SRT_CONTENT_TYPE },
    });
    await touchEdit(env.DB, edit.id, now);
    return Response.json(ACK);
  }
  throw new AppError("not_found", `The engine channel has no ${method} ${subpath} for a clip edit.`);
}
