/** Fixed-window attempt counters for sign-in and sign-up (table auth_throttle), the turns of slowed e-mail addresses, and their removal once over. */

/**
 * Counts one attempt in `scope` and returns the count in the current window.
 * A window older than `windowSeconds` starts over. One statement, so
 * concurrent attempts each see a distinct count.
 */
export async function countAttempt(db: D1Database, scope: string, windowSeconds: number, nowMs: number): Promise<number> {
  const windowStart = nowMs - windowSeconds * 1000;
  const row = await db
    .prepare(
      `INSERT INTO auth_throttle (scope, window_start, attempts, expires_ms) VALUES (?1, ?2, 1, ?2 + ?4)
       ON CONFLICT (scope) DO UPDATE SET
         attempts = CASE WHEN window_start <= ?3 THEN 1 ELSE attempts + 1 END,
         expires_ms = CASE WHEN window_start <= ?3 THEN ?2 ELSE window_start END + ?4,
         window_start = CASE WHEN window_start <= ?3 THEN ?2 ELSE window_start END
       RETURNING attempts, window_start`,
    )
    .bind(scope, nowMs, windowStart, windowSeconds * 1000)
    .first<{ attempts: number; window_start: number }>();
  return row?.attempts ?? 1;
}

/** When the scope's current window ends (epoch ms), or null without one. */
export async function windowEndOf(db: D1Database, scope: string, windowSeconds: number): Promise<number | null> {
  const row = await db.prepare(`SELECT window_start FROM auth_throttle WHERE scope = ?`).bind(scope).first<{ window_start: number }>();
  return row ? row.window_start + windowSeconds * 1000 : null;
}

export async function clearAttempts(db: D1Database, scope: string): Promise<void> {
  await db.prepare(`DELETE FROM auth_throttle WHERE scope = ?`).bind(scope).run();
}

/** Gives one attempt back (a success is not a failure); never below zero. */
export async function takeBackAttempt(db: D1Database, scope: string): Promise<void> {
  await db.prepare(`UPDATE auth_throttle SET attempts = MAX(attempts - 1, 0) WHERE scope = ?`).bind(scope).run();
}

/**
 * Takes the next turn of `scope` (an e-mail address being slowed): a turn
 * lasts `delayMs` and starts when the turns already given out end (or now);
 * the attempt goes ahead when its turn ends. One statement, so concurrent
 * attempts get consecutive turns. Refused, and nothing reserved, when the
 * attempt would have to wait more than `maxWaitMs`.
 */
export async function reserveSlot(
  db: D1Database,
  scope: string,
  delayMs: number,
  maxWaitMs: number,
  nowMs: number,
): Promise<{ reserved: true; goAtMs: number } | { reserved: false; retryAtMs: number }> {
  const row = await db
    .prepare(
      `UPDATE auth_throttle SET next_slot_ms = MAX(next_slot_ms, ?2) + ?3
       WHERE scope = ?1 AND MAX(next_slot_ms, ?2) + ?3 - ?2 <= ?4
       RETURNING next_slot_ms`,
    )
    .bind(scope, nowMs, delayMs, maxWaitMs)
    .first<{ next_slot_ms: number }>();
  if (row) return { reserved: true, goAtMs: row.next_slot_ms };
  const current = await db.prepare(`SELECT next_slot_ms FROM auth_throttle WHERE scope = ?`).bind(scope).first<{ next_slot_ms: number }>();
  // Room comes back once the queue is short enough for one more turn.
  return { reserved: false, retryAtMs: (current?.next_slot_ms ?? nowMs) + delayMs - maxWaitMs };
}

/** Removes up to `maxRows` counters whose window is over and whose turns are over. */
export async function purgeExpiredAttempts(db: D1Database, nowMs: number, maxRows: number): Promise<void> {
  await db
    .prepare(
      `DELETE FROM auth_throttle WHERE scope IN (
         SELECT scope FROM auth_throttle WHERE expires_ms <= ?1 AND next_slot_ms <= ?1 LIMIT ?2)`,
    )
    .bind(nowMs, maxRows)
    .run();
}
