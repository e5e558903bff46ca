/** Saved clip configurations, per account, named (SPEC section 3). */
import type { ClipConfig } from "#contract";

export interface SavedConfig {
  name: string;
  config: ClipConfig;
  createdAt: string;
  updatedAt: string;
}

interface ConfigRow {
  name: string;
  aspect_ratio: string;
  resolution: number;
  min_clip_seconds: number;
  max_clip_seconds: number;
  max_clips: number;
  reframe: string;
  layout: string;
  captions: string;
  caption_style: string;
  caption_position: string;
  created_at: string;
  updated_at: string;
}

const CONFIG_COLUMNS =
  "name, aspect_ratio, resolution, min_clip_seconds, max_clip_seconds, max_clips, reframe, layout, captions, caption_style, caption_position, created_at, updated_at";

// Rows are only ever written from a ClipConfig that passed the contract schema.
function configFromRow(row: ConfigRow): SavedConfig {
  return {
    name: row.name,
    config: {
      aspect_ratio: row.aspect_ratio as ClipConfig["aspect_ratio"],
      resolution: row.resolution as ClipConfig["resolution"],
      min_clip_seconds: row.min_clip_seconds,
      max_clip_seconds: row.max_clip_seconds,
      max_clips: row.max_clips,
      reframe: row.reframe as ClipConfig["reframe"],
      layout: row.layout as ClipConfig["layout"],
      captions: row.captions as ClipConfig["captions"],
      caption_style: row.caption_style as ClipConfig["caption_style"],
      caption_position: row.caption_position as ClipConfig["caption_position"],
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
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
  const values = [
    config.aspect_ratio,
    config.resolution,
    config.min_clip_seconds,
    config.max_clip_seconds,
    config.max_clips,
    config.reframe,
    config.layout,
    config.captions,
    config.caption_style,
    config.caption_position,
  ];
  const inserted = await db
    .prepare(
      `INSERT INTO configs (account_id, name, aspect_ratio, resolution, min_clip_seconds, max_clip_seconds, max_clips, reframe, layout,
         captions, caption_style, caption_position, created_at, updated_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE (SELECT COUNT(*) FROM configs WHERE account_id = ?1) < ?
       ON CONFLICT (account_id, name) DO NOTHING`,
    )
    .bind(accountId, name, ...values, at, at, limit)
    .run();
  const created = inserted.meta.changes > 0;
  if (!created) {
    const updated = await db
      .prepare(
        `UPDATE configs SET aspect_ratio = ?, resolution = ?, min_clip_seconds = ?, max_clip_seconds = ?, max_clips = ?, reframe = ?, layout = ?,
           captions = ?, caption_style = ?, caption_position = ?, updated_at = ?
         WHERE account_id = ? AND name = ?`,
      )
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
