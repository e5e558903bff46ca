import { Hono } from "hono";
import { z } from "zod";
import { countConfigs, deleteConfig, getConfig, listConfigs, putConfig, savedConfigToJson } from "../db/configs";
import { ClipConfig } from "../engine/contract";
import type { AppEnv } from "../http/app-env";
import { AppError } from "../http/errors";
import { requireJsonBody } from "../http/json-body";
import { validate } from "../http/validate";

/** Lower-case letters, digits, `_` and `-`; safe in URLs, logs and file names. */
export const CONFIG_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const ConfigName = z.string().regex(CONFIG_NAME_PATTERN, {
  message: "must be 1-64 characters: lower-case letters, digits, '_' or '-', starting with a letter or digit",
});
/** Keeps one account's saved configurations a list a person can manage. */
export const MAX_CONFIGS_PER_ACCOUNT = 100;

const nameParam = validate("param", z.object({ name: ConfigName }));

function configNotFound(name: string): AppError {
  return new AppError("not_found", `No saved configuration named ${JSON.stringify(name)}.`);
}

export const configs = new Hono<AppEnv>()
  .get("/", async (c) => {
    const saved = await listConfigs(c.env.DB, c.get("auth").accountId);
    return c.json({ configs: saved.map(savedConfigToJson), count: saved.length });
  })
  .get("/:name", nameParam, async (c) => {
    const { name } = c.req.valid("param");
    const saved = await getConfig(c.env.DB, c.get("auth").accountId, name);
    if (!saved) throw configNotFound(name);
    return c.json(savedConfigToJson(saved));
  })
  .put("/:name", nameParam, requireJsonBody, validate("json", ClipConfig), async (c) => {
    const { name } = c.req.valid("param");
    const { accountId } = c.get("auth");
    const existing = await getConfig(c.env.DB, accountId, name);
    if (!existing && (await countConfigs(c.env.DB, accountId)) >= MAX_CONFIGS_PER_ACCOUNT) {
      throw new AppError("conflict", `An account can save at most ${MAX_CONFIGS_PER_ACCOUNT} configurations.`);
    }
    const { created, saved } = await putConfig(c.env.DB, accountId, name, c.req.valid("json"));
    return c.json(savedConfigToJson(saved), created ? 201 : 200);
  })
  .delete("/:name", nameParam, async (c) => {
    const { name } = c.req.valid("param");
    if (!(await deleteConfig(c.env.DB, c.get("auth").accountId, name))) throw configNotFound(name);
    return c.body(null, 204);
  });
