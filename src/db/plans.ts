/** The plans table (SPEC section 3): credits, request window, active-job limit and upload limits per plan. */
export interface PlanLimits {
  name: string;
  creditsPerPeriod: number;
  requestsPerMinute: number;
  maxActiveJobs: number;
  /** Largest direct upload (tus Tus-Max-Size), before the service-wide MAX_SOURCE_BYTES. */
  maxUploadBytes: number;
  /** Uploads an account may hold at once (created and not yet deleted), and their declared bytes together. */
  maxOpenUploads: number;
  maxOpenUploadBytes: number;
  /** Bytes of completed upload jobs' sources kept for clip edits, together; past it the oldest are released. */
  maxKeptSourceBytes: number;
}

export interface PlanRow {
  name: string;
  credits_per_period: number;
  requests_per_minute: number;
  max_active_jobs: number;
  max_upload_bytes: number;
  max_open_uploads: number;
  max_open_upload_bytes: number;
  max_kept_source_bytes: number;
}

export const PLAN_COLUMNS =
  "name, credits_per_period, requests_per_minute, max_active_jobs, max_upload_bytes, max_open_uploads, max_open_upload_bytes, max_kept_source_bytes";

export function planFromRow(row: PlanRow): PlanLimits {
  return {
    name: row.name,
    creditsPerPeriod: row.credits_per_period,
    requestsPerMinute: row.requests_per_minute,
    maxActiveJobs: row.max_active_jobs,
    maxUploadBytes: row.max_upload_bytes,
    maxOpenUploads: row.max_open_uploads,
    maxOpenUploadBytes: row.max_open_upload_bytes,
    maxKeptSourceBytes: row.max_kept_source_bytes,
  };
}

export async function getPlan(db: D1Database, name: string): Promise<PlanLimits | null> {
  const row = await db.prepare(`SELECT ${PLAN_COLUMNS} FROM plans WHERE name = ?`).bind(name).first<PlanRow>();
  return row ? planFromRow(row) : null;
}

export async function listPlans(db: D1Database): Promise<PlanLimits[]> {
  const { results } = await db.prepare(`SELECT ${PLAN_COLUMNS} FROM plans ORDER BY credits_per_period, name`).all<PlanRow>();
  return results.map(planFromRow);
}

export function planToJson(plan: PlanLimits) {
  return {
    name: plan.name,
    credits_per_period: plan.creditsPerPeriod,
    requests_per_minute: plan.requestsPerMinute,
    max_active_jobs: plan.maxActiveJobs,
  };
}
