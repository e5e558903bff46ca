/** Saved clip configurations, per account, named (SPEC section 3). */
import { ClipConfig, DEFAULT_CLIP_CONFIG } from "#contract";

export interface SavedConfig {
  name: string;
  config: ClipConfig;
  createdAt: string;
  updatedAt: string;
}

/**
 * Every ClipConfig member has a column of the same name (migrations 0001,
 * 0005, 0006, 0029, ...), so the SQL is written from the schema's own list:
 * a new member needs its column, nothing here.
 */
const FIELDS = Object.keys(ClipConfig.shape) as (keyof ClipConfig)[];
const CONFIG_COLUMNS = ["name", ...FIELDS, "created_at", "updated_at"].join(", ");

type ConfigRow = Record<keyof ClipConfig, unknown> & { name: string; created_at: string; updated_at: string };

/** SQLite has no booleans: a boolean member (remove_fillers) is stored as 0 or 1. */
const BOOLEAN_FIELDS = new Set(FIELDS.filter((field) => typeof DEFAULT_CLIP_CONFIG[field] === "boolean"));
const fromColumn = (field: keyof ClipConfig, value: unknown) => (BOOLEAN_FIELDS.has(field) ? value === 1 || value === true : value);
const toColumn = (value: unknown) => (typeof value === "boolean" ? (value ? 1 : 0) : value);

// Rows are only ever written from a ClipConfig that passed the contract schema;
// parsing them again types them and gives a column added later its default.
function configFromRow(row: ConfigRow): SavedConfig {
  const stored = Object.fromEntries(FIELDS.filter((field) => row[field] !== null && row[field] !== undefined).map((field) => [field, fromColumn(field, row[field])]));
  return { name: row.name, config: ClipConfig.parse(stored), createdAt: row.created_at, updatedAt: row.updated_at };
}

export async function getConfig(db: D1Database, accountId: string, name: string): Promise<SavedConfig | null> {
  const row = await db
    .prepare(`SELECT ${CONFIG_COLUMNS} FROM configs WHERE account_id = ? AND name = ?`)
    .bind(accountId, name)
    .first<ConfigRow>();
  return row ? configFromRow(row) : null;
}

export async function listConfigs(db: D1Database, accountId: string): Promise<SavedConfig[]> {
  const { results } = await db
    .prepare(`SELECT ${CONFIG_COLUMNS} FROM configs WHERE account_id = ? ORDER BY name`)
    .bind(accountId)
    .all<ConfigRow>();
  return results.map(configFromRow);
}

/**
 * Creates or replaces; `created` tells which, for 201 vs 200. A new name is
 * only inserted while the account has fewer than `limit` configurations,
 * checked in the INSERT itself, so concurrent creations cannot pass the
 * limit together; `limitReached` when that refused it.
 */
export async function putConfig(
  db: D1Database,
  accountId: string,
  name: string,
  config: ClipConfig,
  limit: number,
  now = new Date(),
): Promise<{ created: boolean; saved: SavedConfig; limitReached?: never } | { limitReached: true }> {
  const at = now.toISOString();
  const values = FIELDS.map((field) => toColumn(config[field]));
  const inserted = await db
    .prepare(
      `INSERT INTO configs (account_id, name, ${FIELDS.join(", ")}, created_at, updated_at)
       SELECT ${Array(FIELDS.length + 4).fill("?").join(", ")}
       WHERE (SELECT COUNT(*) FROM configs WHERE account_id = ?1) < ?
       ON CONFLICT (account_id, name) DO NOTHING`,
    )
    .bind(accountId, name, ...values, at, at, limit)
    .run();
  const created = inserted.meta.changes > 0;
  if (!created) {
    const updated = await db
      .prepare(`UPDATE configs SET ${FIELDS.map((field) => `${field} = ?`).join(", ")}, updated_at = ? WHERE account_id = ? AND name = ?`)
      .bind(...values, at, accountId, name)
      .run();
    // Neither inserted nor there to update: the limit refused a new name.
    if (updated.meta.changes === 0) return { limitReached: true };
  }
  const saved = await getConfig(db, accountId, name);
  if (!saved) throw new Error(`configuration ${name} vanished while being written`);
  return { created, saved };
}

export async function deleteConfig(db: D1Database, accountId: string, name: string): Promise<boolean> {
  const result = await db.prepare(`DELETE FROM configs WHERE account_id = ? AND name = ?`).bind(accountId, name).run();
  return result.meta.changes > 0;
}

export function savedConfigToJson(saved: SavedConfig) {
  return { name: saved.name, ...saved.config, created_at: saved.createdAt, updated_at: saved.updatedAt };
}
