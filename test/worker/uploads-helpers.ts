/** tus requests against the Worker, written from the protocol text (the e2e suite uses tus-js-client itself). */
import { env, runInDurableObject } from "cloudflare:test";
import { api, type TestAccount } from "./helpers.ts";
import { uploadKey } from "../../src/uploads/ids.ts";
import type { UploadState } from "../../src/uploads/upload-state.ts";

export const TUS = { "Tus-Resumable": "1.0.0" } as const;

export function metadataHeader(values: Record<string, string>): string {
  const b64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
  return Object.entries(values)
    .map(([key, value]) => `${key} ${b64(value)}`)
    .join(",");
}

export async function createUpload(account: TestAccount, length: number, fileName = "talk.mp4"): Promise<string> {
  const res = await api(account, "/api/v1/uploads", {
    method: "POST",
    headers: { ...TUS, "Upload-Length": String(length), "Upload-Metadata": metadataHeader({ filename: fileName, filetype: "video/mp4" }) },
  });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  const location = res.headers.get("Location") ?? "";
  const match = /^\/api\/v1\/uploads\/(upl_[A-Za-z0-9]+)$/.exec(location);
  if (!match) throw new Error(`unexpected Location ${location}`);
  return match[1]!;
}

export function patch(account: TestAccount, uploadId: string, offset: number, body: BodyInit, headers: Record<string, string> = {}): Promise<Response> {
  return api(account, `/api/v1/uploads/${uploadId}`, {
    method: "PATCH",
    headers: { ...TUS, "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream", ...headers },
    body,
  });
}

export function head(account: TestAccount, uploadId: string): Promise<Response> {
  return api(account, `/api/v1/uploads/${uploadId}`, { method: "HEAD", headers: TUS });
}

/** Deterministic pseudo-random bytes (so parts differ and a misplaced byte shows). */
export function bytesOf(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** Uploads `data` in PATCHes of `chunk` bytes; returns the upload id. */
export async function uploadAll(account: TestAccount, data: Uint8Array, chunk: number, fileName = "talk.mp4"): Promise<string> {
  const id = await createUpload(account, data.byteLength, fileName);
  for (let offset = 0; offset < data.byteLength; offset += chunk) {
    const res = await patch(account, id, offset, data.slice(offset, offset + chunk));
    if (res.status !== 204) throw new Error(`PATCH at ${offset} failed: ${res.status} ${await res.text()}`);
  }
  return id;
}

/** Everything R2 holds for an upload (the finished object, if any). */
export async function storedKeys(uploadId: string): Promise<string[]> {
  const listed = await env.UPLOADS.list({ prefix: uploadKey(uploadId) });
  return listed.objects.map((o) => o.key);
}

export function uploadStub(uploadId: string) {
  return env.UPLOAD_STATE.get(env.UPLOAD_STATE.idFromName(uploadId));
}

/** The multipart upload id and the row counts of the upload's Durable Object storage. */
export function uploadInternals(uploadId: string) {
  return runInDurableObject(uploadStub(uploadId), (_instance: UploadState, state) => {
    const sql = state.storage.sql;
    const tables = sql.exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('upload', 'parts', 'staging')`).toArray();
    if (tables.length < 3) return { multipartId: null, rows: 0 };
    const meta = sql.exec<{ multipart_id: string }>(`SELECT multipart_id FROM upload`).toArray()[0];
    const rows =
      sql.exec<{ n: number }>(`SELECT (SELECT COUNT(*) FROM upload) + (SELECT COUNT(*) FROM parts) + (SELECT COUNT(*) FROM staging) AS n`).one().n;
    return { multipartId: meta?.multipart_id ?? null, rows };
  });
}

/**
 * True while a PATCH is being received by the upload's Durable Object (its
 * one-at-a-time flag is set): what a concurrent PATCH is refused for.
 */
export function isReceiving(uploadId: string): Promise<boolean> {
  return runInDurableObject(uploadStub(uploadId), (instance: UploadState) => (instance as unknown as { appending: boolean }).appending);
}

/** Moves the upload's expiry into the past (the alarm then finds it due). */
export function backdateExpiry(uploadId: string): Promise<void> {
  return runInDurableObject(uploadStub(uploadId), (_instance: UploadState, state) => {
    state.storage.sql.exec(`UPDATE upload SET expires_at_ms = ?`, Date.now() - 1000);
  });
}

/** True when R2 no longer knows the multipart upload (aborted or completed). */
export async function multipartGone(uploadId: string, multipartId: string): Promise<boolean> {
  const multipart = env.UPLOADS.resumeMultipartUpload(uploadKey(uploadId), multipartId);
  try {
    await multipart.uploadPart(1, new Uint8Array([1, 2, 3]));
    return false;
  } catch {
    return true;
  }
}
