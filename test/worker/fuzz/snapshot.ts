/**
 * What the service has stored for a set of accounts, so a suite can prove
 * that rejected requests wrote nothing: D1 rows (jobs, clips, configs,
 * idempotency records, keys, the credit columns) and the R2 objects of their
 * jobs. api_keys.last_used_at is left out on purpose: it records that a valid
 * key was used, which is true of a rejected request too.
 */
import { env } from "cloudflare:test";

export interface Snapshot {
  rows: string[];
  objects: string[];
}

export async function snapshot(accountIds: readonly string[]): Promise<Snapshot> {
  const marks = accountIds.map(() => "?").join(",");
  const queries = [
    `SELECT 'account' AS t, id || ':' || plan || ':' || credits_granted || ':' || credits_used || ':' || credits_reserved AS r FROM accounts WHERE id IN (${marks})`,
    `SELECT 'key', id || ':' || COALESCE(revoked_at, '-') || ':' || name FROM api_keys WHERE account_id IN (${marks})`,
    `SELECT 'job', id || ':' || status || ':' || progress || ':' || credits_reserved || ':' || credits_charged || ':' || updated_at FROM jobs WHERE account_id IN (${marks})`,
    `SELECT 'clip', job_id || ':' || idx FROM clips WHERE job_id IN (SELECT id FROM jobs WHERE account_id IN (${marks}))`,
    `SELECT 'config', account_id || ':' || name || ':' || updated_at FROM configs WHERE account_id IN (${marks})`,
    `SELECT 'idem', account_id || ':' || key || ':' || status FROM idempotency_keys WHERE account_id IN (${marks})`,
  ];
  const results = await env.DB.batch(queries.map((sql) => env.DB.prepare(sql).bind(...accountIds)));
  const rows = results.flatMap((result) => (result.results as Record<string, string>[]).map((row) => Object.values(row).join("|"))).sort();
  // Every object a job can have: the public bucket whole, the private bucket's staged uploads and transcripts.
  const objects: string[] = [];
  for (const [name, bucket, prefix] of [
    ["clips", env.CLIPS, ""],
    ["private", env.UPLOADS, "staging/"],
    ["private", env.UPLOADS, "transcripts/"],
  ] as const) {
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix, cursor });
      objects.push(...page.objects.map((o) => `${name}:${o.key}`));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }
  return { rows, objects: objects.sort() };
}

/** Keys present in `after` but not in `before`. */
export function added(before: readonly string[], after: readonly string[]): string[] {
  const seen = new Set(before);
  return after.filter((item) => !seen.has(item));
}
