import { z } from "@hono/zod-openapi";
import { saveConfig } from "../configs/save.ts";
import { deleteConfig, getConfig, listConfigs, savedConfigToJson } from "../db/configs.ts";
import { apiApp, apiRoute, BODY_ERRORS, jsonContent } from "../http/api-app.ts";
import { AppError } from "../http/errors.ts";
import { requireJsonBody } from "../http/json-body.ts";
import { ConfigBody, ConfigList, SavedConfig } from "./openapi-schemas.ts";

/** Lower-case letters, digits, `_` and `-`; safe in URLs, logs and file names. */
export const CONFIG_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const ConfigName = z.string().regex(CONFIG_NAME_PATTERN, {
  message: "must be 1-64 characters: lower-case letters, digits, '_' or '-', starting with a letter or digit",
});
export { MAX_CONFIGS_PER_ACCOUNT } from "../configs/save.ts";

const NameParam = z.object({ name: ConfigName.openapi({ param: { name: "name", in: "path" }, example: "shorts" }) });

function configNotFound(name: string): AppError {
  return new AppError("not_found", `No saved configuration named ${JSON.stringify(name)}.`);
}

const listRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "List saved configurations",
  operationId: "listConfigs",
  responses: { 200: { description: "Saved configurations", content: jsonContent(ConfigList) } },
}, {
  errors: [],
});

const getRoute = apiRoute({
  method: "get",
  path: "/{name}",
  summary: "Get a saved configuration",
  operationId: "getConfig",
  request: { params: NameParam },
  responses: { 200: { description: "The configuration", content: jsonContent(SavedConfig) } },
}, {
  errors: ["invalid_request", "not_found"],
});

const putRoute = apiRoute({
  method: "put",
  path: "/{name}",
  summary: "Create or replace a saved configuration",
  description: "Omitted fields take their defaults. 201 when the name is new, 200 when it replaced a configuration.",
  operationId: "putConfig",
  // A PUT without a JSON body would otherwise validate as {} and reset the configuration.
  middleware: [requireJsonBody] as const,
  request: { params: NameParam, body: { required: true, content: jsonContent(ConfigBody) } },
  responses: {
    200: { description: "Replaced", content: jsonContent(SavedConfig) },
    201: { description: "Created", content: jsonContent(SavedConfig) },
  },
}, {
  errors: [...BODY_ERRORS, "unknown_font", "invalid_color", "unsupported_language", "conflict"],
});

const deleteRoute = apiRoute({
  method: "delete",
  path: "/{name}",
  summary: "Delete a saved configuration",
  operationId: "deleteConfig",
  request: { params: NameParam },
  responses: { 204: { description: "Deleted" } },
}, {
  errors: ["invalid_request", "not_found"],
});

export const configs = apiApp()
  .openapi(listRoute, async (c) => {
    const saved = await listConfigs(c.env.DB, c.get("auth").accountId);
    return c.json({ configs: saved.map(savedConfigToJson), count: saved.length }, 200);
  })
  .openapi(getRoute, async (c) => {
    const { name } = c.req.valid("param");
    const saved = await getConfig(c.env.DB, c.get("auth").accountId, name);
    if (!saved) throw configNotFound(name);
    return c.json(savedConfigToJson(saved), 200);
  })
  .openapi(putRoute, async (c) => {
    const { name } = c.req.valid("param");
    const { created, saved } = await saveConfig(c.env, c.get("auth").accountId, name, c.req.valid("json"));
    return c.json(savedConfigToJson(saved), created ? 201 : 200);
  })
  .openapi(deleteRoute, async (c) => {
    const { name } = c.req.valid("param");
    if (!(await deleteConfig(c.env.DB, c.get("auth").accountId, name))) throw configNotFound(name);
    return c.body(null, 204);
  });
