/** Fixed-window attempt counters for sign-in and sign-up (table auth_throttle). */

/**
 * Counts one attempt in `scope` and returns the count in the current window.
 * A window older than `windowSeconds` starts over. One statement, so
 * concurrent attempts each see a distinct count.
 */
export async function countAttempt(db: D1Database, scope: string, windowSeconds: number, nowMs: number): Promise<number> {
  const windowStart = nowMs - windowSeconds * 1000;
  const row = await db
    .prepare(
      `INSERT INTO auth_throttle (scope, window_start, attempts) VALUES (?1, ?2, 1)
       ON CONFLICT (scope) DO UPDATE SET
         attempts = CASE WHEN window_start <= ?3 THEN 1 ELSE attempts + 1 END,
         window_start = CASE WHEN window_start <= ?3 THEN ?2 ELSE window_start END
       RETURNING attempts, window_start`,
    )
    .bind(scope, nowMs, windowStart)
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
