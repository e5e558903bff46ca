/**
 * npm run setup [-- --env <name>] [--config wrangler.toml]: provisions on the
 * logged-in Cloudflare account what wrangler.toml names, and only what is
 * missing, so a second run changes nothing:
 *   1. the D1 database (its id written into wrangler.toml's database_id);
 *   2. the R2 buckets; 3. the queues and dead-letter queues;
 *   4. the Worker's secrets (the value of an environment variable of the same
 *      name when set, else generated; never printed);
 *   5. the database's pending migrations.
 * Every step is a wrangler command (the `wrangler` on the PATH).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { newCallbackTokenSecret, newSigningKey } from "./local-stack/engine-keys.ts";
import {
  listedQueues,
  parseBucketList,
  parseCreatedDatabaseId,
  parseD1List,
  parseSecretList,
  readPlan,
  REQUIRED_SECRETS,
  withDatabaseId,
} from "./setup/plan.ts";

function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

const configPath = path.resolve(option("config") ?? "wrangler.toml");
const envName = option("env");
// wrangler.toml's top level is the production deployment; --env reaches wrangler only where the file has that section.
const hasEnvSection = (name: string) => new RegExp(`^\\[env\\.${name.replace(/[^A-Za-z0-9_-]/g, "")}[\\].]`, "m").test(readFileSync(configPath, "utf8"));
const envArgs = envName && hasEnvSection(envName) ? ["--env", envName] : [];
const configArgs = ["--config", configPath];

function wrangler(args: string[], input?: string): string {
  const result = spawnSync("wrangler", args, { encoding: "utf8", input, stdio: ["pipe", "pipe", "inherit"], env: process.env });
  if (result.error) throw new Error(`could not run wrangler: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`wrangler ${args.slice(0, 3).join(" ")} failed (exit ${result.status})`);
  // wrangler colours its labels on a terminal; parsing reads plain text.
  return stripVTControlCharacters(result.stdout);
}

const GENERATORS: Record<(typeof REQUIRED_SECRETS)[number], () => string> = {
  ADMIN_TOKEN: () => randomBytes(32).toString("base64url"),
  ENGINE_SIGNING_KEY: newSigningKey,
  CALLBACK_TOKEN_SECRET: newCallbackTokenSecret,
  COOKIES_KEY: () => randomBytes(32).toString("base64url"),
};

function main(): void {
  let toml = readFileSync(configPath, "utf8");
  const plan = readPlan(toml);

  const databases = parseD1List(wrangler(["d1", "list", "--json", ...configArgs]));
  let id = databases.find((d) => d.name === plan.databaseName)?.uuid;
  if (!id) {
    const created = parseCreatedDatabaseId(wrangler(["d1", "create", plan.databaseName, ...configArgs]));
    if (!created) throw new Error(`wrangler d1 create ${plan.databaseName} printed no database_id`);
    id = created;
    console.log(`created D1 database ${plan.databaseName}`);
  }
  if (plan.databaseId !== id) {
    toml = withDatabaseId(toml, id);
    writeFileSync(configPath, toml);
    console.log(`wrote database_id ${id} into ${path.basename(configPath)}`);
  }

  const buckets = parseBucketList(wrangler(["r2", "bucket", "list", ...configArgs]));
  for (const bucket of plan.buckets.filter((b) => !buckets.includes(b))) {
    wrangler(["r2", "bucket", "create", bucket, ...configArgs]);
    console.log(`created R2 bucket ${bucket}`);
  }

  const existingQueues = listedQueues(wrangler(["queues", "list", ...configArgs]), plan.queues);
  for (const queue of plan.queues.filter((q) => !existingQueues.includes(q))) {
    wrangler(["queues", "create", queue, ...configArgs]);
    console.log(`created queue ${queue}`);
  }

  const secrets = parseSecretList(wrangler(["secret", "list", "--format", "json", ...configArgs, ...envArgs]));
  for (const name of REQUIRED_SECRETS.filter((s) => !secrets.includes(s))) {
    const given = process.env[name]?.trim();
    // On stdin, never on the command line or in the output.
    wrangler(["secret", "put", name, ...configArgs, ...envArgs], given || GENERATORS[name]());
    console.log(`set secret ${name}${given ? " (from the environment)" : " (generated)"}`);
  }

  wrangler(["d1", "migrations", "apply", plan.databaseName, "--remote", ...configArgs, ...envArgs]);
  console.log("setup complete: npm run deploy next");
}

try {
  main();
} catch (error) {
  console.error(`setup: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
