import { DurableObject } from "cloudflare:workers";
import { accountState } from "../account/stub.ts";
import { ACTIVE_STATUSES, findJob } from "../db/jobs.ts";
import { discardBody } from "./discard-body.ts";
import { uploadKey } from "./ids.ts";
import { sourceKeptUntil } from "./kept-source.ts";
import { recordKeptSourceBytes, releaseOverLimit } from "./kept-source-limit.ts";
import { CLAIM_RECHECK_MS, MAX_PATCH_BYTES, OPEN_UPLOAD_MARGIN_MS, STAGING_ROW_BYTES, TOMBSTONE_TTL_MS, UPLOAD_TTL_MS } from "./limits.ts";
import { createUploadTables, UploadTables, type NewUpload, type UploadMeta, type UploadStatus } from "./upload-tables.ts";

export type { NewUpload, UploadStatus };

/** An upload as its owner sees it. */
export interface UploadView {
  uploadId: string;
  length: number;
  offset: number;
  fileName: string | null;
  /** The client's Upload-Metadata header, echoed on HEAD as tus asks. */
  metadata: string | null;
  status: UploadStatus;
  createdAt: string;
  /** null once a job has taken the upload (it then lives as long as the job). */
  expiresAt: string | null;
  jobId: string | null;
}

export type UploadFailureReason =
  | "not_found"
  | "expired"
  | "busy"
  | "offset_mismatch"
  | "length_exceeded"
  | "chunk_too_large"
  | "in_use"
  | "incomplete"
  | "storage_unavailable";

export interface UploadFailure {
  ok: false;
  reason: UploadFailureReason;
  /** The upload's current offset (offset_mismatch, and after a partly stored PATCH). */
  offset?: number;
}

export type UploadResult = { ok: true; upload: UploadView } | UploadFailure;


function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * One per upload (named by the upload id). Holds the upload's exact state:
 * the R2 multipart upload, the parts already stored, and the staged bytes of
 * the part being filled (the client's chunks need not line up with R2's part
 * size). A PATCH runs inside this object from the first byte to the commit,
 * and only one at a time (`appending`), so concurrent or repeated PATCHes can
 * never both apply. Whatever arrived before a dropped connection is kept, so
 * HEAD reports it and the client resumes there.
 */
export class UploadState extends DurableObject<Env> {
  private readonly tables: UploadTables;
  /** In memory on purpose: a restarted object has no PATCH in flight. */
  private appending = false;
  /** Set while the upload is being deleted (termination, expiry, its job's end): nothing may take or extend it. */
  private closing = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    createUploadTables(ctx.storage.sql);
    this.tables = new UploadTables(ctx.storage.sql);
  }

  async create(input: NewUpload): Promise<UploadView> {
    if (this.tables.meta()) throw new Error(`upload ${input.uploadId} already exists`);
    const multipart = await this.env.UPLOADS.createMultipartUpload(uploadKey(input.uploadId), {
      customMetadata: { upload_id: input.uploadId, account_id: input.accountId },
    });
    const now = Date.now();
    this.tables.insertMeta({
      uploadId: input.uploadId,
      accountId: input.accountId,
      length: input.length,
      partSize: input.partSize,
      fileName: input.fileName,
      metadata: input.metadata,
      multipartId: multipart.uploadId,
      status: "uploading",
      createdAt: new Date(now).toISOString(),
      expiresAtMs: now + UPLOAD_TTL_MS,
      jobId: null,
    });
    await this.ctx.storage.setAlarm(now + UPLOAD_TTL_MS);
    return this.present(this.tables.meta()!);
  }

  /** The upload if `accountId` owns it and it still exists. */
  view(accountId: string): UploadResult {
    const meta = this.owned(accountId);
    if ("reason" in meta) return meta;
    return { ok: true, upload: this.present(meta) };
  }

  /**
   * Why a PATCH with these headers would be refused now, or null: asked by
   * the Worker before it hands over the body, so that a refusal is answered
   * without the body ever being touched (the runtime then deals with the
   * unread body, and the connection carries the client's next request).
   * `append` checks again (another PATCH may come in between).
   */
  admits(accountId: string, offset: number, declaredLength: number | null): UploadFailure | null {
    const meta = this.owned(accountId);
    if ("reason" in meta) return meta;
    if (this.appending) return { ok: false, reason: "busy", offset: this.offsetOf(meta) };
    const current = this.offsetOf(meta);
    if (meta.status !== "uploading" || offset !== current) return { ok: false, reason: "offset_mismatch", offset: current };
    if (declaredLength !== null && declaredLength > MAX_PATCH_BYTES) return { ok: false, reason: "chunk_too_large", offset: current };
    if (declaredLength !== null && current + declaredLength > meta.length) return { ok: false, reason: "length_exceeded", offset: current };
    return null;
  }

  /**
   * Appends the body at `offset` (tus PATCH). Full parts go to R2 as soon as
   * they fill; the remainder is staged in this object's storage. The last
   * byte completes the multipart upload into the final object.
   */
  async append(accountId: string, offset: number, declaredLength: number | null, body: ReadableStream<Uint8Array>): Promise<UploadResult> {
    const refused = this.admits(accountId, offset, declaredLength);
    if (refused) {
      await discardBody(body, declaredLength);
      return refused;
    }
    const meta = this.owned(accountId) as UploadMeta;
    const current = this.offsetOf(meta);

    this.appending = true;
    try {
      return await this.receive(meta, current, body);
    } finally {
      this.appending = false;
    }
  }

  private async receive(meta: UploadMeta, start: number, body: ReadableStream<Uint8Array>): Promise<UploadResult> {
    const multipart = this.env.UPLOADS.resumeMultipartUpload(uploadKey(meta.uploadId), meta.multipartId);
    // The staged bytes come first: they are the beginning of the next part.
    const stagedBefore = this.tables.stagedChunks();
    const partsBefore = this.tables.partCount();
    const buffered: Uint8Array[] = [...stagedBefore];
    let bufferedBytes = buffered.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    let partNumber = partsBefore + 1;
    let received = 0;
    let failure: UploadFailure | null = null;

    const flushParts = async (): Promise<void> => {
      while (bufferedBytes >= meta.partSize) {
        const all = concat(buffered, bufferedBytes);
        const part = all.subarray(0, meta.partSize);
        const uploaded = await multipart.uploadPart(partNumber, part);
        const rest = all.slice(meta.partSize);
        // One synchronous step: the part is recorded and the staging it consumed is gone.
        this.ctx.storage.transactionSync(() => {
          this.tables.insertPart(partNumber, uploaded.etag, meta.partSize);
          this.tables.clearStaging();
        });
        partNumber += 1;
        buffered.length = 0;
        if (rest.byteLength > 0) buffered.push(rest);
        bufferedBytes = rest.byteLength;
      }
    };

    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        let chunk = value;
        const room = Math.min(MAX_PATCH_BYTES - received, meta.length - start - received);
        if (chunk.byteLength > room) {
          // Keep what fits; the rest of the body is refused.
          chunk = chunk.subarray(0, Math.max(0, room));
          // Past the upload's length is a body this upload can never hold (refused whole, below);
          // past the chunk cap only, what fits is kept and the client resumes after it.
          failure = {
            ok: false,
            reason: meta.length - start - received <= MAX_PATCH_BYTES - received ? "length_exceeded" : "chunk_too_large",
          };
        }
        received += chunk.byteLength;
        if (chunk.byteLength > 0) {
          buffered.push(chunk);
          bufferedBytes += chunk.byteLength;
          try {
            await flushParts();
          } catch (err) {
            console.error(`upload ${meta.uploadId}: storing a part failed`, err);
            failure = { ok: false, reason: "storage_unavailable" };
          }
        }
        if (failure) break;
      }
    } catch (err) {
      // The connection dropped: keep every byte that arrived, so the client resumes right after it.
      console.warn(`upload ${meta.uploadId}: PATCH body ended early (${err instanceof Error ? err.message : String(err)})`);
    } finally {
      reader.releaseLock();
    }
    // The rest of a refused body is read and dropped, not canceled: canceled, it leaves the client's connection unusable.
    if (failure) await discardBody(body, null);

    if (failure?.reason === "length_exceeded") {
      // A body longer than what remains (sent chunked, so it was only found out while reading):
      // nothing of it is kept, so the upload is exactly as before this PATCH. Parts it already
      // sent to R2 are forgotten here and overwritten by the next PATCH under the same numbers.
      this.ctx.storage.transactionSync(() => {
        this.tables.deletePartsAfter(partsBefore);
        this.tables.clearStaging();
        for (const chunk of stagedBefore) this.tables.insertStaging(chunk.slice().buffer);
      });
      return { ...failure, offset: this.offsetOf(this.tables.meta()!) };
    }
    try {
      this.stage(buffered);
      if (failure === null && start + received === meta.length) await this.complete(meta, multipart, partNumber, concat(buffered, bufferedBytes));
    } catch (err) {
      console.error(`upload ${meta.uploadId}: storing failed`, err);
      return { ok: false, reason: "storage_unavailable", offset: this.offsetOf(this.tables.meta()!) };
    }
    const after = this.tables.meta()!;
    if (failure) return { ...failure, offset: this.offsetOf(after) };
    return { ok: true, upload: this.present(after) };
  }

  /** Replaces the staging rows with `chunks`, in rows small enough for SQLite-backed storage. */
  private stage(chunks: Uint8Array[]): void {
    const bytes = concat(chunks, chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
    this.ctx.storage.transactionSync(() => {
      this.tables.clearStaging();
      for (let at = 0; at < bytes.byteLength; at += STAGING_ROW_BYTES) {
        this.tables.insertStaging(bytes.slice(at, at + STAGING_ROW_BYTES).buffer);
      }
    });
  }

  private async complete(meta: UploadMeta, multipart: R2MultipartUpload, partNumber: number, last: Uint8Array): Promise<void> {
    if (last.byteLength > 0) {
      const uploaded = await multipart.uploadPart(partNumber, last);
      this.ctx.storage.transactionSync(() => {
        this.tables.insertPart(partNumber, uploaded.etag, last.byteLength);
        this.tables.clearStaging();
      });
    }
    await multipart.complete(this.tables.parts());
    this.tables.markComplete();
  }

  /** tus termination: discards the upload unless a job has taken it. */
  async terminate(accountId: string): Promise<{ ok: true } | UploadFailure> {
    const meta = this.owned(accountId);
    if ("reason" in meta) return meta;
    if (meta.jobId !== null) return { ok: false, reason: "in_use" };
    if (this.appending) return { ok: false, reason: "busy", offset: this.offsetOf(meta) };
    await this.discard(meta);
    return { ok: true };
  }

  /** A job takes the upload: it must be complete and not taken by another job. */
  async claim(accountId: string, jobId: string): Promise<UploadResult> {
    const meta = this.owned(accountId);
    if ("reason" in meta) return meta;
    if (meta.jobId !== null && meta.jobId !== jobId) return { ok: false, reason: "in_use" };
    if (meta.status !== "complete") return { ok: false, reason: "incomplete", offset: this.offsetOf(meta) };
    this.tables.setJob(jobId);
    await this.ctx.storage.setAlarm(Date.now() + CLAIM_RECHECK_MS);
    await this.keepCounted(meta);
    return { ok: true, upload: this.present(this.tables.meta()!) };
  }

  /** The job was not created after all: the upload is free again (and expires as before). */
  async unclaim(jobId: string): Promise<void> {
    const meta = this.tables.meta();
    if (!meta || meta.jobId !== jobId) return;
    this.tables.setJob(null);
    await this.ctx.storage.setAlarm(meta.expiresAtMs);
  }

  /** The job that took the upload ended: its source is deleted. */
  async release(jobId: string): Promise<boolean> {
    const meta = this.tables.meta();
    if (!meta || meta.jobId !== jobId) return false;
    await this.discard(meta);
    return true;
  }

  /**
   * The job that took the upload completed: its source is kept for clip
   * edits until `untilMs` (kept-source.ts), then the alarm deletes it. A
   * kept source no longer counts against the account's open-upload caps; it
   * counts against the plan's kept-source limit instead (kept-source-limit.ts).
   */
  async keep(jobId: string, untilMs: number): Promise<boolean> {
    const meta = this.tables.meta();
    if (!meta || meta.jobId !== jobId) return false;
    if (untilMs <= Date.now()) {
      await this.discard(meta);
      return true;
    }
    await this.ctx.storage.setAlarm(untilMs);
    await this.uncount(meta);
    await recordKeptSourceBytes(this.env.DB, jobId, meta.length);
    await releaseOverLimit(this.env, meta.accountId, jobId);
    return true;
  }

  override async alarm(): Promise<void> {
    const meta = this.tables.meta();
    if (!meta || meta.status === "expired") {
      await this.purge();
      return;
    }
    if (meta.jobId !== null) {
      const job = await findJob(this.env.DB, meta.jobId);
      if (job && ACTIVE_STATUSES.includes(job.status)) {
        await this.ctx.storage.setAlarm(Date.now() + CLAIM_RECHECK_MS);
        await this.keepCounted(meta);
        return;
      }
      // A completed job keeps its source for edits until its period ends (fixed here if its settling has not yet).
      const keptUntil = job?.status === "completed" ? await sourceKeptUntil(this.env.DB, job.id) : null;
      if (keptUntil !== null && keptUntil > Date.now()) await this.keep(meta.jobId, keptUntil);
      else await this.discard(meta);
      return;
    }
    if (Date.now() < meta.expiresAtMs) {
      await this.ctx.storage.setAlarm(meta.expiresAtMs);
      return;
    }
    if (this.appending) {
      // A PATCH is still streaming: expire right after it.
      await this.ctx.storage.setAlarm(Date.now() + 60_000);
      return;
    }
    this.closing = true;
    try {
      await this.deleteObjects(meta);
      this.tables.markExpired();
      await this.ctx.storage.setAlarm(Date.now() + TOMBSTONE_TTL_MS);
    } finally {
      this.closing = false;
    }
    await this.uncount(meta);
  }

  /** While a job holds the upload, its place under the account's caps must not lapse. */
  private async keepCounted(meta: UploadMeta): Promise<void> {
    try {
      await accountState(this.env, meta.accountId).extendUpload(meta.uploadId, Date.now() + CLAIM_RECHECK_MS + OPEN_UPLOAD_MARGIN_MS);
    } catch (err) {
      console.error(`upload ${meta.uploadId}: keeping its place under the account's caps failed`, err);
    }
  }

  /** The bytes are gone: the account's open-upload caps get the place back (else it lapses on its own). */
  private async uncount(meta: UploadMeta): Promise<void> {
    try {
      await accountState(this.env, meta.accountId).releaseUpload(meta.uploadId);
    } catch (err) {
      console.error(`upload ${meta.uploadId}: releasing its place under the account's caps failed`, err);
    }
  }

  /** The R2 side of an upload: the unfinished multipart upload, or the finished object. */
  private async deleteObjects(meta: UploadMeta): Promise<void> {
    if (meta.status === "uploading") {
      await this.env.UPLOADS.resumeMultipartUpload(uploadKey(meta.uploadId), meta.multipartId).abort();
    }
    // Also after an abort: a completion that raced it leaves the object behind.
    await this.env.UPLOADS.delete(uploadKey(meta.uploadId));
  }

  private async discard(meta: UploadMeta): Promise<void> {
    this.closing = true;
    try {
      await this.deleteObjects(meta);
      await this.purge();
    } finally {
      this.closing = false;
    }
    await this.uncount(meta);
  }

  private async purge(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // deleteAll drops the tables too; a later call must still find them.
    createUploadTables(this.ctx.storage.sql);
  }

  private owned(accountId: string): UploadMeta | UploadFailure {
    const meta = this.tables.meta();
    if (!meta || meta.accountId !== accountId || this.closing) return { ok: false, reason: "not_found" };
    if (meta.status === "expired" || (meta.jobId === null && Date.now() >= meta.expiresAtMs)) {
      return { ok: false, reason: "expired" };
    }
    return meta;
  }

  private offsetOf(meta: UploadMeta): number {
    if (meta.status === "complete") return meta.length;
    return this.tables.partBytes() + this.tables.stagedBytes();
  }

  private present(meta: UploadMeta): UploadView {
    return {
      uploadId: meta.uploadId,
      length: meta.length,
      offset: this.offsetOf(meta),
      fileName: meta.fileName,
      metadata: meta.metadata,
      status: meta.status,
      createdAt: meta.createdAt,
      expiresAt: meta.jobId === null ? new Date(meta.expiresAtMs).toISOString() : null,
      jobId: meta.jobId,
    };
  }
}
