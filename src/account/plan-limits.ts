/**
 * The account's current plan limits, held by its Durable Object and set on
 * every plan change (PUT /admin/v1/accounts/:id/plan). The API key lookup a
 * request carries comes from a per-isolate cache that can be up to a minute
 * old; these stored values win over it, so a downgrade applies from the next
 * request and the next submission. Absent until the first plan change: then
 * the caller's plan (read from D1 with the key) is the current one.
 */
export interface StoredPlanLimits {
  requestsPerMinute: number | null;
  maxActiveJobs: number | null;
}

const KEYS = { requestsPerMinute: "requests_per_minute", maxActiveJobs: "max_active_jobs" } as const;

export class PlanLimits {
  private current: StoredPlanLimits;

  /** `sql` must have the `meta (key, value)` table of the account's object. */
  constructor(private readonly sql: SqlStorage) {
    const rows = sql
      .exec<{ key: string; value: string }>(`SELECT key, value FROM meta WHERE key IN (?, ?)`, KEYS.requestsPerMinute, KEYS.maxActiveJobs)
      .toArray();
    const read = (key: string) => {
      const row = rows.find((r) => r.key === key);
      return row ? Number(row.value) : null;
    };
    this.current = { requestsPerMinute: read(KEYS.requestsPerMinute), maxActiveJobs: read(KEYS.maxActiveJobs) };
  }

  requestsPerMinute(fallback: number): number {
    return this.current.requestsPerMinute ?? fallback;
  }

  maxActiveJobs(fallback: number): number {
    return this.current.maxActiveJobs ?? fallback;
  }

  set(limits: Partial<{ requestsPerMinute: number; maxActiveJobs: number }>): void {
    for (const name of ["requestsPerMinute", "maxActiveJobs"] as const) {
      const value = limits[name];
      if (value === undefined) continue;
      this.sql.exec(
        `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        KEYS[name],
        String(value),
      );
      this.current[name] = value;
    }
  }
}
