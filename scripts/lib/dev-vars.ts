import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export const PROJECT_ROOT = path.resolve(import.meta.dirname, "../..");
export const DEV_VARS_PATH = path.join(PROJECT_ROOT, ".dev.vars");
const DEV_VARS_EXAMPLE_PATH = path.join(PROJECT_ROOT, ".dev.vars.example");

/** Secrets the example only names: each new .dev.vars gets fresh random values for them. */
const GENERATED_SECRETS = ["ADMIN_TOKEN", "ENGINE_SECRET"];

/**
 * Creates .dev.vars from the example when missing, with fresh random secrets
 * (the Worker refuses the example's ENGINE_SECRET); true when it created it.
 */
export function ensureDevVars(): boolean {
  if (existsSync(DEV_VARS_PATH)) return false;
  const text = readFileSync(DEV_VARS_EXAMPLE_PATH, "utf8")
    .split(/\r?\n/)
    .map((line) => {
      const name = /^([A-Z_]+)=/.exec(line)?.[1];
      return name && GENERATED_SECRETS.includes(name) ? `${name}=local-${randomBytes(24).toString("base64url")}` : line;
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

/** Environment for wrangler children: no telemetry, no Request.cf download (no internet here). */
export function wranglerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...extra };
}

export const WRANGLER_BIN = path.join(PROJECT_ROOT, "node_modules", ".bin", "wrangler");
export const TSX_BIN = path.join(PROJECT_ROOT, "node_modules", ".bin", "tsx");
