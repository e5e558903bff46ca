/** Saving one of an account's configurations (the REST route and the MCP tool): the per-account limit, checked by the write itself. */
import type { ClipConfig } from "#contract";
import { putConfig, type SavedConfig } from "../db/configs.ts";
import { DomainError } from "../domain/errors.ts";

/** Keeps one account's saved configurations a list a person can manage. */
export const MAX_CONFIGS_PER_ACCOUNT = 100;

/** Creates or replaces `name`; a new name over the limit is a conflict. */
export async function saveConfig(env: Env, accountId: string, name: string, config: ClipConfig): Promise<{ created: boolean; saved: SavedConfig }> {
  // The limit is checked by the insert itself: concurrent PUTs of new names cannot pass it together.
  const result = await putConfig(env.DB, accountId, name, config, MAX_CONFIGS_PER_ACCOUNT);
  if (result.limitReached) throw new DomainError("conflict", `An account can save at most ${MAX_CONFIGS_PER_ACCOUNT} configurations.`);
  return { created: result.created, saved: result.saved };
}
