/** Publication keys of deleted jobs, kept for the sweep (the sweep bookkeeping migration, src/jobs/deleted-publications.ts). */

/**
 * Keeps the job's publication key, if it has one, before its row goes: for
 * the DELETE's own batch, ahead of the statement that deletes the row.
 */
export function rememberDeletedPublication(db: D1Database, accountId: string, jobId: string, now: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO deleted_publications (publication_key, job_id, deleted_at)
       SELECT publication_key, id, ? FROM jobs WHERE id = ? AND account_id = ? AND publication_key IS NOT NULL
       ON CONFLICT (publication_key) DO NOTHING`,
    )
    .bind(now, jobId, accountId);
}

export interface DeletedPublication {
  publicationKey: string;
  jobId: string;
}

/** Keys of jobs deleted before `before`, oldest first. */
export async function listDeletedPublications(db: D1Database, before: string, limit: number): Promise<DeletedPublication[]> {
  const { results } = await db
    .prepare(`SELECT publication_key, job_id FROM deleted_publications WHERE deleted_at < ? ORDER BY deleted_at LIMIT ?`)
    .bind(before, limit)
    .all<{ publication_key: string; job_id: string }>();
  return results.map((row) => ({ publicationKey: row.publication_key, jobId: row.job_id }));
}

export async function forgetDeletedPublication(db: D1Database, publicationKey: string): Promise<void> {
  await db.prepare(`DELETE FROM deleted_publications WHERE publication_key = ?`).bind(publicationKey).run();
}
