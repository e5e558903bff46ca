/**
 * The rolling request window of one account. A request counts in the bucket
 * of its second and stays counted for 60 one-second buckets (its own second
 * and the 59 after), so the window rolls every second and holds at most 60
 * buckets whatever the limit.
 *
 * The Durable Object is single-threaded and `hit` is synchronous, so the
 * in-memory buckets decide concurrent requests exactly.
 *
 * Exact across restarts without a write per request: storage is written
 * ahead. When a request finds no reserved room, the window stores a
 * reservation for the next few requests (a row placed at the last second the
 * reservation covers, so each stored hit expires no earlier than the real one)
 * in the same synchronous call, before it answers (the output gate holds the
 * answer until the write is durable). Requests covered by the reservation
 * write nothing. A restart reloads the rows: every accepted request is counted,
 * plus at most the reservation's unused rest (never fewer, so a restart can
 * never let more than the limit through; it may refuse a few requests early).
 */
export const WINDOW_SECONDS = 60;
/** Longest time one reservation covers. */
export const RESERVE_SECONDS = 10;
/** Largest reservation: bounds what a restart over-counts on a large limit. */
export const MAX_RESERVATION = 1000;

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

/** Unused room of the last reservation: stored as `size` hits at `second`. */
interface Reservation {
  second: number;
  size: number;
  left: number;
}

function secondsUntilExpiry(bucketSecond: number, nowMs: number): number {
  return Math.max(1, Math.ceil(((bucketSecond + WINDOW_SECONDS) * 1000 - nowMs) / 1000));
}

/** How many requests one reservation covers: a tenth of the limit, within the room left. */
export function reservationSize(limit: number, room: number): number {
  return Math.max(1, Math.min(room, MAX_RESERVATION, Math.ceil(limit / 10)));
}

export class RequestWindow {
  /** second -> accepted requests in that second (after a restart: what storage held). */
  private buckets = new Map<number, number>();
  private reservation: Reservation | null = null;
  /** Storage writes made (for tests and the benchmark's arithmetic). */
  writes = 0;

  constructor(private readonly sql: SqlStorage) {
    this.recreate();
  }

  /** Creates the table if missing (also after the object's storage was deleted) and reloads it. */
  recreate(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS request_window (second INTEGER PRIMARY KEY, hits INTEGER NOT NULL)`);
    this.load();
  }

  /** (Re)reads the stored rows: every request they cover counts, used or not. */
  load(): void {
    const rows = this.sql.exec<BucketRow>(`SELECT second, hits FROM request_window`).toArray();
    this.buckets = new Map(rows.map((row) => [row.second, row.hits]));
    this.reservation = null;
  }

  hit(limit: number, nowMs: number): HitResult {
    return this.take(limit, nowMs, 1).result;
  }

  /**
   * Counts up to `wanted` requests at once (an MCP batch counts each of its
   * messages): as many as the window has room for, all in this second.
   * `granted` is how many were counted; the result is allowed when at least
   * one was, and its retry-after (when fewer than `wanted` were) is the wait
   * for one more.
   */
  take(limit: number, nowMs: number, wanted: number): { granted: number; result: HitResult } {
    const nowSecond = Math.floor(nowMs / 1000);
    const expiredUpTo = nowSecond - WINDOW_SECONDS;
    for (const second of this.buckets.keys()) if (second <= expiredUpTo) this.buckets.delete(second);
    const used = this.used();
    const oldest = Math.min(...this.buckets.keys(), nowSecond);
    const granted = Math.max(0, Math.min(Math.floor(wanted), limit - used));
    if (granted > 0) {
      this.persistAhead(limit, used, nowSecond, granted);
      this.buckets.set(nowSecond, (this.buckets.get(nowSecond) ?? 0) + granted);
    }
    const resetSeconds = secondsUntilExpiry(oldest, nowMs);
    const retryAfterSeconds = granted === wanted ? 0 : this.secondsUntilRoom(limit, nowMs);
    return { granted, result: { allowed: granted > 0, limit, remaining: limit - used - granted, resetSeconds, retryAfterSeconds } };
  }

  private used(): number {
    let used = 0;
    for (const hits of this.buckets.values()) used += hits;
    return used;
  }

  /** Seconds until enough old buckets leave the window for one more request (refused requests are not counted). */
  private secondsUntilRoom(limit: number, nowMs: number): number {
    const used = this.used();
    if (used < limit) return 0;
    let freed = 0;
    for (const second of [...this.buckets.keys()].sort((a, b) => a - b)) {
      freed += this.buckets.get(second)!;
      if (used - freed < limit) return secondsUntilExpiry(second, nowMs);
    }
    return WINDOW_SECONDS;
  }

  /** Makes sure the `count` requests about to be accepted are already in storage (or in a stored reservation). */
  private persistAhead(limit: number, used: number, nowSecond: number, count: number): void {
    const current = this.reservation;
    if (current && current.left >= count && nowSecond <= current.second) {
      current.left -= count;
      return;
    }
    // One synchronous group of statements: SQLite commits them together.
    if (current && current.left > 0) {
      // The old reservation's unused rest was never used: give it back.
      this.sql.exec(`UPDATE request_window SET hits = hits - ? WHERE second = ?`, current.left, current.second);
    }
    // At least the requests being accepted (count <= limit - used, the room left).
    const size = Math.max(count, reservationSize(limit, limit - used));
    const second = nowSecond + RESERVE_SECONDS - 1;
    this.sql.exec(
      `INSERT INTO request_window (second, hits) VALUES (?, ?) ON CONFLICT (second) DO UPDATE SET hits = hits + excluded.hits`,
      second,
      size,
    );
    this.sql.exec(`DELETE FROM request_window WHERE second <= ? OR hits <= 0`, nowSecond - WINDOW_SECONDS);
    this.writes += 1;
    this.reservation = { second, size, left: size - count };
  }
}
