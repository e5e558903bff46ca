/**
 * The tus operations on one account's uploads, independent of how the caller
 * authenticated (API key or dashboard session): each takes the account and
 * its plan, talks to the upload's Durable Object and turns its answer into
 * tus headers or an DomainError with a stable code.
 */
import type { PlanLimits } from "../db/plans.ts";
import { DomainError } from "../domain/errors.ts";
import { isUploadId, newUploadId } from "./ids.ts";
import { accountState } from "../account/stub.ts";
import { MAX_PATCH_BYTES, maxUploadBytes, OPEN_UPLOAD_MARGIN_MS, partSizeFor, UPLOAD_TTL_MS } from "./limits.ts";
import { uploadState } from "./stub.ts";
import {
  checkTusVersion,
  fileNameOf,
  isPatchContentType,
  parseByteCount,
  parseMetadata,
  PATCH_CONTENT_TYPE,
  TUS_EXTENSIONS,
  TUS_RESPONSE_HEADERS,
  TUS_VERSION,
} from "./tus-headers.ts";
import type { UploadFailure, UploadView } from "./upload-state.ts";

export interface UploadCaller {
  accountId: string;
  plan: PlanLimits;
}

/** What a request carries that the tus operations read. */
export interface TusRequest {
  header(name: string): string | undefined;
  body: ReadableStream<Uint8Array> | null;
}

export function notFound(uploadId: string): DomainError {
  return new DomainError("not_found", `No upload ${uploadId}.`);
}

/** The Durable Object's refusal as the API's error. */
export function uploadError(uploadId: string, failure: UploadFailure): DomainError {
  const offset = failure.offset;
  const withOffset = offset === undefined ? {} : { extra: { offset }, headers: { "Upload-Offset": String(offset) } };
  switch (failure.reason) {
    case "not_found":
      return notFound(uploadId);
    case "expired":
      return new DomainError("upload_expired", `Upload ${uploadId} expired: no job used it within 24 hours, so it was deleted.`);
    case "busy":
      return new DomainError("upload_busy", `Another PATCH to upload ${uploadId} is still being received; retry once it ends.`, withOffset);
    case "offset_mismatch":
      return new DomainError("upload_offset_mismatch", `Upload-Offset must be the upload's current offset, ${offset ?? "see HEAD"}.`, withOffset);
    case "chunk_too_large":
      return new DomainError("upload_chunk_too_large", `PATCH bodies are limited to ${MAX_PATCH_BYTES} bytes (50 MiB); send the file in chunks of at most that size.`, {
        ...withOffset,
        extra: { ...withOffset.extra, max_chunk_size: MAX_PATCH_BYTES },
      });
    case "length_exceeded":
      return new DomainError("upload_length_exceeded", `The PATCH goes past the upload's Upload-Length.`, withOffset);
    case "in_use":
      return new DomainError("upload_in_use", `Upload ${uploadId} is the source of a job that has not ended.`);
    case "incomplete":
      return new DomainError("upload_incomplete", `Upload ${uploadId} has not received all its bytes yet.`, withOffset);
    case "storage_unavailable":
      return new DomainError("service_unavailable", "Storage is temporarily unavailable; HEAD the upload and resume.", {
        ...withOffset,
        headers: { ...withOffset.headers, "Retry-After": "5" },
      });
  }
}

function checkUploadId(uploadId: string): void {
  if (!isUploadId(uploadId)) throw notFound(uploadId);
}

/** tus headers describing an upload (HEAD, PATCH, POST answers). */
export function uploadHeaders(upload: UploadView): Record<string, string> {
  return {
    ...TUS_RESPONSE_HEADERS,
    "Upload-Offset": String(upload.offset),
    "Upload-Length": String(upload.length),
    ...(upload.metadata !== null ? { "Upload-Metadata": upload.metadata } : {}),
    ...(upload.expiresAt !== null ? { "Upload-Expires": new Date(upload.expiresAt).toUTCString() } : {}),
  };
}

/** The OPTIONS answer: what this server speaks, and the largest upload any plan allows. */
export function optionsHeaders(env: Pick<Env, "MAX_SOURCE_BYTES">): Record<string, string> {
  return {
    "Tus-Resumable": TUS_VERSION,
    "Tus-Version": TUS_VERSION,
    "Tus-Extension": TUS_EXTENSIONS.join(","),
    "Tus-Max-Size": String(maxUploadBytes(Number.MAX_SAFE_INTEGER, env)),
    "Cache-Control": "no-store",
  };
}

/** tus creation: an empty upload of Upload-Length bytes. */
export async function createUpload(env: Env, caller: UploadCaller, req: TusRequest): Promise<UploadView> {
  checkTusVersion(req.header("Tus-Resumable"));
  if (req.header("Upload-Defer-Length") !== undefined) {
    throw new DomainError("invalid_request", "Upload-Defer-Length is not supported: send Upload-Length.");
  }
  const length = parseByteCount("Upload-Length", req.header("Upload-Length"));
  if (length === 0) throw new DomainError("invalid_request", "Upload-Length must be at least 1 byte.", { errors: [{ path: "Upload-Length", message: "zero" }] });
  const max = maxUploadBytes(caller.plan.maxUploadBytes, env);
  if (length > max) {
    throw new DomainError("upload_too_large", `Uploads on the ${caller.plan.name} plan are limited to ${max} bytes.`, {
      extra: { max_size: max },
      headers: { "Tus-Max-Size": String(max) },
    });
  }
  const metadata = parseMetadata(req.header("Upload-Metadata"));
  // Creation with upload (a body on POST) is not offered; a body here is a client mistake.
  if (req.body !== null && (req.header("Content-Length") ?? "0") !== "0") {
    throw new DomainError("invalid_request", "POST creates an empty upload; send the bytes with PATCH.");
  }
  const uploadId = newUploadId();
  const fileName = fileNameOf(metadata);
  // Its place under the plan's open-upload caps first, taken in one step so concurrent creations cannot pass them.
  const account = accountState(env, caller.accountId);
  const limits = { maxCount: caller.plan.maxOpenUploads, maxBytes: caller.plan.maxOpenUploadBytes };
  const reserved = await account.reserveUpload(uploadId, length, Date.now() + UPLOAD_TTL_MS + OPEN_UPLOAD_MARGIN_MS, limits);
  if (!reserved.ok) {
    const what = reserved.reason === "count" ? `${limits.maxCount} open uploads` : `${limits.maxBytes} bytes of open uploads`;
    throw new DomainError("upload_limit_reached", `The ${caller.plan.name} plan allows ${what} at once; delete an upload or use it in a job first.`, {
      extra: {
        max_open_uploads: limits.maxCount,
        max_open_upload_bytes: limits.maxBytes,
        open_uploads: reserved.openCount,
        open_upload_bytes: reserved.openBytes,
      },
    });
  }
  try {
    return await uploadState(env, uploadId).create({
      uploadId,
      accountId: caller.accountId,
      length,
      partSize: partSizeFor(length),
      fileName,
      metadata: metadata.raw,
    });
  } catch (err) {
    await account.releaseUpload(uploadId).catch(() => undefined);
    throw err;
  }
}

/** The upload's state (tus HEAD, and GET as JSON). */
export async function describeUpload(env: Env, caller: UploadCaller, uploadId: string, req: TusRequest, tus: boolean): Promise<UploadView> {
  if (tus) checkTusVersion(req.header("Tus-Resumable"));
  checkUploadId(uploadId);
  const result = await uploadState(env, uploadId).view(caller.accountId);
  if (!result.ok) throw uploadError(uploadId, result);
  return result.upload;
}

/** tus PATCH: appends the body at Upload-Offset. */
export async function appendToUpload(env: Env, caller: UploadCaller, uploadId: string, req: TusRequest): Promise<UploadView> {
  checkTusVersion(req.header("Tus-Resumable"));
  checkUploadId(uploadId);
  if (!isPatchContentType(req.header("Content-Type"))) {
    throw new DomainError("unsupported_media_type", `PATCH bodies must be sent as Content-Type: ${PATCH_CONTENT_TYPE}.`);
  }
  const offset = parseByteCount("Upload-Offset", req.header("Upload-Offset"));
  const declaredText = req.header("Content-Length");
  const declared = declaredText === undefined ? null : parseByteCount("Content-Length", declaredText);
  const body = req.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  const state = uploadState(env, uploadId);
  // Refused on its headers: answered before the body is touched, which leaves the unread body to the runtime, and the
  // client's next request on the connection is answered (a body canceled by the object was not: see discard-body.ts).
  const refused = await state.admits(caller.accountId, offset, declared);
  if (refused) throw uploadError(uploadId, refused);
  const result = await state.append(caller.accountId, offset, declared, body);
  if (!result.ok) throw uploadError(uploadId, result);
  return result.upload;
}

/** tus termination. */
export async function terminateUpload(env: Env, caller: UploadCaller, uploadId: string, req: TusRequest): Promise<void> {
  checkTusVersion(req.header("Tus-Resumable"));
  checkUploadId(uploadId);
  const result = await uploadState(env, uploadId).terminate(caller.accountId);
  if (!result.ok) throw uploadError(uploadId, result);
}
