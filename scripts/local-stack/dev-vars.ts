/**
 * `.dev.vars`, the developer's own Worker variables for `npm run dev` (and the
 * admin token `npm run admin` reads). Created from `.dev.vars.example` with
 * fresh secrets when missing; never committed.
 */
import { randomBytes } from "node:crypto";
import { newCallbackTokenSecret, newSigningKey } from "./engine-keys.ts";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "./paths.ts";

export const DEV_VARS_PATH = join(PROJECT_ROOT, ".dev.vars");
const DEV_VARS_EXAMPLE_PATH = join(PROJECT_ROOT, ".dev.vars.example");

/** Secrets the example only names: each new .dev.vars gets fresh values for them. */
const GENERATED_SECRETS: Record<string, () => string> = {
  ADMIN_TOKEN: () => `local-${randomBytes(24).toString("base64url")}`,
  ENGINE_SIGNING_KEY: newSigningKey,
  CALLBACK_TOKEN_SECRET: newCallbackTokenSecret,
  COOKIES_KEY: () => randomBytes(32).toString("base64url"),
};

/**
 * Creates .dev.vars from the example when missing, with fresh secrets (the
 * Worker refuses the example's placeholders); true when it created it.
 */
export function ensureDevVars(): boolean {
  if (existsSync(DEV_VARS_PATH)) return false;
  const text = readFileSync(DEV_VARS_EXAMPLE_PATH, "utf8")
    .split(/\r?\n/)
    .map((line) => {
      const name = /^([A-Z_]+)=/.exec(line)?.[1];
      const generate = name ? GENERATED_SECRETS[name] : undefined;
      return name && generate ? `${name}=${generate()}` : line;
    })
    .join("\n");
  writeFileSync(DEV_VARS_PATH, text, { mode: 0o600 });
  return true;
}

/** Parses KEY=VALUE lines (dotenv subset: comments, blank lines, optional quotes). */
export function parseDevVars(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match || line.trimStart().startsWith("#")) continue;
    let value = match[2]!;
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    vars[match[1]!] = value;
  }
  return vars;
}

export function readDevVars(): Record<string, string> {
  return existsSync(DEV_VARS_PATH) ? parseDevVars(readFileSync(DEV_VARS_PATH, "utf8")) : {};
}
