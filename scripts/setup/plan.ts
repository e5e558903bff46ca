/**
 * What `npm run setup` provisions, read from wrangler.toml: the D1 database,
 * the R2 buckets, the queues (dead-letter queues included) and the Worker's
 * secrets. A small reader of the few keys it needs, not a TOML parser: the
 * file's layout is the project's own.
 */
export interface SetupPlan {
  databaseName: string;
  databaseId: string;
  buckets: string[];
  queues: string[];
}

/** The secrets the Worker refuses to run without; each is generated when the user gives none. */
export const REQUIRED_SECRETS = ["ADMIN_TOKEN", "ENGINE_SIGNING_KEY", "CALLBACK_TOKEN_SECRET", "COOKIES_KEY"] as const;

/** A database id wrangler.toml ships with, before setup wrote the real one. */
export const PLACEHOLDER_DATABASE_ID = "00000000-0000-0000-0000-000000000000";

function values(toml: string, key: string): string[] {
  const pattern = new RegExp(`^\\s*${key}\\s*=\\s*"([^"]+)"`, "gm");
  return [...toml.matchAll(pattern)].map((m) => m[1] ?? "");
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

export function readPlan(toml: string): SetupPlan {
  const databaseName = values(toml, "database_name")[0];
  const databaseId = values(toml, "database_id")[0];
  if (!databaseName || databaseId === undefined) throw new Error("wrangler.toml names no [[d1_databases]] database_name and database_id");
  return {
    databaseName,
    databaseId,
    buckets: unique(values(toml, "bucket_name")),
    queues: unique([...values(toml, "queue"), ...values(toml, "dead_letter_queue")]),
  };
}

/** wrangler.toml with the database's id written where wrangler reads it. */
export function withDatabaseId(toml: string, id: string): string {
  return toml.replace(/^(\s*database_id\s*=\s*)"[^"]*"/m, `$1"${id}"`);
}

/** `wrangler d1 list --json`: an array of databases, each with its uuid and name. */
export function parseD1List(output: string): { uuid: string; name: string }[] {
  const start = output.indexOf("[");
  const parsed: unknown = JSON.parse(start >= 0 ? output.slice(start) : "[]");
  if (!Array.isArray(parsed)) throw new Error("wrangler d1 list --json did not print an array");
  return parsed.flatMap((entry: unknown) => {
    const e = entry as { uuid?: unknown; name?: unknown };
    return typeof e.uuid === "string" && typeof e.name === "string" ? [{ uuid: e.uuid, name: e.name }] : [];
  });
}

/** The id `wrangler d1 create` prints, in its TOML (database_id = "...") or JSON ("database_id": "...") snippet. */
export function parseCreatedDatabaseId(output: string): string | null {
  return /"?database_id"?\s*[:=]\s*"([0-9a-f-]{36})"/.exec(output)?.[1] ?? null;
}

/** `wrangler r2 bucket list` prints each bucket as "name: <bucket>" followed by its creation date. */
export function parseBucketList(output: string): string[] {
  return [...output.matchAll(/^name:\s+(\S+)/gm)].map((m) => m[1] ?? "");
}

/** `wrangler queues list` prints a table whose name column holds each queue: a name counts when a cell is exactly it. */
export function listedQueues(output: string, wanted: string[]): string[] {
  const cells = new Set(output.split(/[\s│|]+/).filter(Boolean));
  return wanted.filter((name) => cells.has(name));
}

/** `wrangler secret list --format json`: an array of { name, type }. */
export function parseSecretList(output: string): string[] {
  const start = output.indexOf("[");
  if (start < 0) return [];
  const parsed: unknown = JSON.parse(output.slice(start));
  return Array.isArray(parsed) ? parsed.flatMap((e: unknown) => (typeof (e as { name?: unknown }).name === "string" ? [(e as { name: string }).name] : [])) : [];
}
