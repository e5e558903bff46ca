/**
 * Sizes of direct uploads. A PATCH body is capped well below the Workers
 * request body limit (100 MB on the Free and Pro plans), so a client that
 * sends too much gets our 413 with the chunk size to use instead of the
 * edge's plain one. R2 multipart wants every part but the last the same size
 * and at least 5 MiB, at most 10,000 parts: the server fixes the part size
 * per upload and stages the bytes of a partial part itself.
 */
export const MAX_PATCH_BYTES = 50 * 1024 * 1024;
export const MIN_PART_BYTES = 10 * 1024 * 1024;
export const MAX_PARTS = 10_000;
/** Staged bytes are stored in rows of at most this size (SQLite-backed DO rows hold up to 2 MB). */
export const STAGING_ROW_BYTES = 1024 * 1024;
/** An upload no job has taken is deleted this long after its creation (tus expiration). */
export const UPLOAD_TTL_MS = 24 * 60 * 60 * 1000;
/** An open upload's place under the account's caps lapses this long after the upload would have (a release that never arrived). */
export const OPEN_UPLOAD_MARGIN_MS = 60 * 60 * 1000;
/** How long an expired upload still answers 410 instead of 404. */
export const TOMBSTONE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** A claimed upload re-checks its job this often, in case the job's end did not release it. */
export const CLAIM_RECHECK_MS = 6 * 60 * 60 * 1000;

/** Part size for an upload of `length` bytes: MIN_PART_BYTES, or larger (whole MiB) for files over 100 GiB. */
export function partSizeFor(length: number): number {
  const mib = 1024 * 1024;
  return Math.max(MIN_PART_BYTES, Math.ceil(length / MAX_PARTS / mib) * mib);
}

/** The upload's size cap: the plan's, never above the service's largest source. */
export function maxUploadBytes(planMax: number, env: Pick<Env, "MAX_SOURCE_BYTES">): number {
  const service = Number(env.MAX_SOURCE_BYTES);
  return Number.isFinite(service) && service > 0 ? Math.min(planMax, Math.floor(service)) : planMax;
}
