/** Saving one of an account's configurations (the REST route and the MCP tool): the per-account limit, then the write. */
import type { ClipConfig } from "#contract";
import { countConfigs, getConfig, putConfig, type SavedConfig } from "../db/configs";
import { AppError } from "../http/errors";

/** Keeps one account's saved configurations a list a person can manage. */
export const MAX_CONFIGS_PER_ACCOUNT = 100;

/** Creates or replaces `name`; a new name over the limit is a conflict. */
export async function saveConfig(env: Env, accountId: string, name: string, config: ClipConfig): Promise<{ created: boolean; saved: SavedConfig }> {
  const existing = await getConfig(env.DB, accountId, name);
  if (!existing && (await countConfigs(env.DB, accountId)) >= MAX_CONFIGS_PER_ACCOUNT) {
    throw new AppError("conflict", `An account can save at most ${MAX_CONFIGS_PER_ACCOUNT} configurations.`);
  }
  return putConfig(env.DB, accountId, name, config);
}
