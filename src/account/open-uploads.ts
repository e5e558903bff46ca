/**
 * The account's open direct uploads (created and not yet deleted), held in
 * its Durable Object so the per-plan caps on their count and declared bytes
 * are exact under concurrency: a creation reserves its place in one
 * synchronous step before the upload exists, and the upload gives it back
 * when it is deleted (terminated, expired, or its job ended).
 *
 * Every row also carries when it lapses on its own (the upload's expiry,
 * pushed out while a job holds the upload), so a release that never arrived
 * cannot hold a place forever: lapsed rows are dropped at the next creation.
 */
export interface OpenUploadLimits {
  maxCount: number;
  maxBytes: number;
}

export type ReserveResult =
  | { ok: true }
  | { ok: false; reason: "count" | "bytes"; openCount: number; openBytes: number };

export function createOpenUploadsTable(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS open_uploads (upload_id TEXT PRIMARY KEY, bytes INTEGER NOT NULL, lapses_at_ms INTEGER NOT NULL)`);
}

export function reserveUpload(sql: SqlStorage, uploadId: string, bytes: number, lapsesAtMs: number, limits: OpenUploadLimits, nowMs: number): ReserveResult {
  sql.exec(`DELETE FROM open_uploads WHERE lapses_at_ms <= ?`, nowMs);
  const { n, total } = sql.exec<{ n: number; total: number }>(`SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS total FROM open_uploads`).one();
  if (n + 1 > limits.maxCount) return { ok: false, reason: "count", openCount: n, openBytes: total };
  if (total + bytes > limits.maxBytes) return { ok: false, reason: "bytes", openCount: n, openBytes: total };
  sql.exec(`INSERT OR REPLACE INTO open_uploads (upload_id, bytes, lapses_at_ms) VALUES (?, ?, ?)`, uploadId, bytes, lapsesAtMs);
  return { ok: true };
}

/** A job took the upload: it stays open until the job ends, whenever that is. */
export function extendUpload(sql: SqlStorage, uploadId: string, lapsesAtMs: number): void {
  sql.exec(`UPDATE open_uploads SET lapses_at_ms = MAX(lapses_at_ms, ?) WHERE upload_id = ?`, lapsesAtMs, uploadId);
}

export function releaseUpload(sql: SqlStorage, uploadId: string): void {
  sql.exec(`DELETE FROM open_uploads WHERE upload_id = ?`, uploadId);
}

export function openUploads(sql: SqlStorage, nowMs: number): { count: number; bytes: number } {
  const { n, total } = sql
    .exec<{ n: number; total: number }>(`SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS total FROM open_uploads WHERE lapses_at_ms > ?`, nowMs)
    .one();
  return { count: n, bytes: total };
}
