/** The SQL of one UploadState object: its one meta row, the stored parts and the staged bytes. */
export type UploadStatus = "uploading" | "complete" | "expired";

export interface NewUpload {
  uploadId: string;
  accountId: string;
  length: number;
  partSize: number;
  fileName: string | null;
  metadata: string | null;
}

export interface UploadMeta extends NewUpload {
  multipartId: string;
  status: UploadStatus;
  createdAt: string;
  expiresAtMs: number;
  jobId: string | null;
}

interface MetaRow extends Record<string, SqlStorageValue> {
  upload_id: string;
  account_id: string;
  length: number;
  part_size: number;
  file_name: string | null;
  metadata: string | null;
  multipart_id: string;
  status: string;
  created_at: string;
  expires_at_ms: number;
  job_id: string | null;
}

export function createUploadTables(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS upload (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    upload_id TEXT NOT NULL, account_id TEXT NOT NULL, length INTEGER NOT NULL, part_size INTEGER NOT NULL,
    file_name TEXT, metadata TEXT, multipart_id TEXT NOT NULL, status TEXT NOT NULL,
    created_at TEXT NOT NULL, expires_at_ms INTEGER NOT NULL, job_id TEXT)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS parts (part_number INTEGER PRIMARY KEY, etag TEXT NOT NULL, size INTEGER NOT NULL)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS staging (seq INTEGER PRIMARY KEY AUTOINCREMENT, bytes BLOB NOT NULL)`);
}

export class UploadTables {
  constructor(private readonly sql: SqlStorage) {}

  meta(): UploadMeta | null {
    const row = this.sql.exec<MetaRow>(`SELECT * FROM upload WHERE one = 1`).toArray()[0];
    if (!row) return null;
    return {
      uploadId: row.upload_id,
      accountId: row.account_id,
      length: row.length,
      partSize: row.part_size,
      fileName: row.file_name,
      metadata: row.metadata,
      multipartId: row.multipart_id,
      status: row.status as UploadStatus,
      createdAt: row.created_at,
      expiresAtMs: row.expires_at_ms,
      jobId: row.job_id,
    };
  }

  insertMeta(meta: UploadMeta): void {
    this.sql.exec(
      `INSERT INTO upload (one, upload_id, account_id, length, part_size, file_name, metadata, multipart_id, status, created_at, expires_at_ms, job_id)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      meta.uploadId, meta.accountId, meta.length, meta.partSize, meta.fileName, meta.metadata, meta.multipartId,
      meta.status, meta.createdAt, meta.expiresAtMs, meta.jobId,
    );
  }

  setJob(jobId: string | null): void {
    this.sql.exec(`UPDATE upload SET job_id = ? WHERE one = 1`, jobId);
  }

  markComplete(): void {
    this.sql.exec(`UPDATE upload SET status = 'complete' WHERE one = 1`);
  }

  /** Keeps only the meta row (the 410 answer needs the owner); parts and staging are gone with the bytes. */
  markExpired(): void {
    this.sql.exec(`UPDATE upload SET status = 'expired' WHERE one = 1`);
    this.sql.exec(`DELETE FROM parts`);
    this.clearStaging();
  }

  partCount(): number {
    return this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM parts`).one().n;
  }

  partBytes(): number {
    return this.sql.exec<{ n: number }>(`SELECT COALESCE(SUM(size), 0) AS n FROM parts`).one().n;
  }

  parts(): R2UploadedPart[] {
    return this.sql
      .exec<{ part_number: number; etag: string }>(`SELECT part_number, etag FROM parts ORDER BY part_number`)
      .toArray()
      .map((row) => ({ partNumber: row.part_number, etag: row.etag }));
  }

  insertPart(partNumber: number, etag: string, size: number): void {
    this.sql.exec(`INSERT OR REPLACE INTO parts (part_number, etag, size) VALUES (?, ?, ?)`, partNumber, etag, size);
  }

  /** Forgets the parts after `partNumber` (a PATCH that is refused whole). */
  deletePartsAfter(partNumber: number): void {
    this.sql.exec(`DELETE FROM parts WHERE part_number > ?`, partNumber);
  }

  stagedBytes(): number {
    return this.sql.exec<{ n: number }>(`SELECT COALESCE(SUM(length(bytes)), 0) AS n FROM staging`).one().n;
  }

  stagedChunks(): Uint8Array[] {
    return this.sql
      .exec<{ bytes: ArrayBuffer }>(`SELECT bytes FROM staging ORDER BY seq`)
      .toArray()
      .map((row) => new Uint8Array(row.bytes));
  }

  insertStaging(bytes: ArrayBuffer): void {
    this.sql.exec(`INSERT INTO staging (bytes) VALUES (?)`, bytes);
  }

  clearStaging(): void {
    this.sql.exec(`DELETE FROM staging`);
  }
}
