/**
 * The rolling request window of one account. A request counts in the bucket
 * of its second and stays counted for 60 one-second buckets (its own second
 * and the 59 after), so the window rolls every second and holds at most 60
 * buckets whatever the limit.
 *
 * The Durable Object is single-threaded and `hit` is synchronous, so the
 * in-memory buckets decide concurrent requests exactly. They are written to
 * SQLite behind the hot path (`flush`, at most about once a second per
 * account) and read back when the object starts: a restart forgets at most the
 * hits since the last flush, and busy accounts do not pay a storage write per
 * request.
 */
export const WINDOW_SECONDS = 60;

export interface HitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the oldest counted request leaves the window. */
  resetSeconds: number;
  /** When refused: seconds until one more request would be accepted; 0 when allowed. */
  retryAfterSeconds: number;
}

interface BucketRow extends Record<string, SqlStorageValue> {
  second: number;
  hits: number;
}

function secondsUntilExpiry(bucketSecond: number, nowMs: number): number {
  return Math.max(1, Math.ceil(((bucketSecond + WINDOW_SECONDS) * 1000 - nowMs) / 1000));
}

export class RequestWindow {
  /** second -> accepted requests in that second. */
  private buckets = new Map<number, number>();
  private readonly dirty = new Set<number>();
  /** Buckets up to this second have expired in memory but may still be stored. */
  private expiredUpTo: number | null = null;
  private lastFlushMs = 0;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS request_window (second INTEGER PRIMARY KEY, hits INTEGER NOT NULL)`);
    this.load();
  }

  /** (Re)reads the stored buckets, dropping unflushed changes. */
  load(): void {
    const rows = this.sql.exec<BucketRow>(`SELECT second, hits FROM request_window`).toArray();
    this.buckets = new Map(rows.map((row) => [row.second, row.hits]));
    this.dirty.clear();
    this.expiredUpTo = null;
  }

  hit(limit: number, nowMs: number): HitResult {
    const nowSecond = Math.floor(nowMs / 1000);
    const expiredUpTo = nowSecond - WINDOW_SECONDS;
    for (const second of this.buckets.keys()) {
      if (second <= expiredUpTo) {
        this.buckets.delete(second);
        this.dirty.delete(second);
        this.expiredUpTo = Math.max(this.expiredUpTo ?? second, second);
      }
    }
    const seconds = [...this.buckets.keys()].sort((a, b) => a - b);
    const used = seconds.reduce((sum, second) => sum + this.buckets.get(second)!, 0);
    const oldest = seconds[0] ?? nowSecond;

    if (used < limit) {
      this.buckets.set(nowSecond, (this.buckets.get(nowSecond) ?? 0) + 1);
      this.dirty.add(nowSecond);
      return { allowed: true, limit, remaining: limit - used - 1, resetSeconds: secondsUntilExpiry(oldest, nowMs), retryAfterSeconds: 0 };
    }

    // Refused (not counted): wait until enough old buckets leave for one request.
    let freed = 0;
    let retryAfter = WINDOW_SECONDS;
    for (const second of seconds) {
      freed += this.buckets.get(second)!;
      if (used - freed < limit) {
        retryAfter = secondsUntilExpiry(second, nowMs);
        break;
      }
    }
    return { allowed: false, limit, remaining: 0, resetSeconds: secondsUntilExpiry(oldest, nowMs), retryAfterSeconds: retryAfter };
  }

  /** True when changes wait to be written and the last write is `intervalMs` old. */
  flushDue(nowMs: number, intervalMs: number): boolean {
    return this.hasPendingChanges() && nowMs - this.lastFlushMs >= intervalMs;
  }

  hasPendingChanges(): boolean {
    return this.dirty.size > 0 || this.expiredUpTo !== null;
  }

  /** Writes changed buckets and deletes expired ones (synchronous SQL). */
  flush(nowMs: number): void {
    for (const second of this.dirty) {
      this.sql.exec(
        `INSERT INTO request_window (second, hits) VALUES (?, ?)
         ON CONFLICT (second) DO UPDATE SET hits = excluded.hits`,
        second,
        this.buckets.get(second) ?? 0,
      );
    }
    if (this.expiredUpTo !== null) this.sql.exec(`DELETE FROM request_window WHERE second <= ?`, this.expiredUpTo);
    this.dirty.clear();
    this.expiredUpTo = null;
    this.lastFlushMs = nowMs;
  }
}
