/**
 * npm run setup against a recording stand-in for wrangler on the PATH
 * (wrangler-stand-in.mjs): the exact commands and their order, the database
 * id written into wrangler.toml, secrets generated on stdin and never printed,
 * and a second run that creates nothing.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(os.tmpdir(), "setup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bin = path.join(dir, "bin");
const config = path.join(dir, "wrangler.toml");

function runSetup(): { stdout: string; calls: { args: string[]; stdin: boolean }[] } {
  rmSync(path.join(dir, "calls.jsonl"), { force: true });
  const result = spawnSync(path.join(root, "node_modules/.bin/tsx"), [path.join(root, "scripts/setup.ts"), "--env", "production", "--config", config], {
    encoding: "utf8",
    env: { PATH: `${bin}:${process.env.PATH ?? ""}`, WRANGLER_STAND_IN_DIR: dir, HOME: process.env.HOME ?? dir },
  });
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  const calls = readFileSync(path.join(dir, "calls.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { args: string[]; stdin: boolean });
  return { stdout: result.stdout, calls };
}

describe("npm run setup", () => {
  it("provisions what wrangler.toml names, in order, and a second run changes nothing", () => {
    mkdirSync(bin, { recursive: true });
    symlinkSync(path.join(root, "test/deploy/wrangler-stand-in.mjs"), path.join(bin, "wrangler"));
    // A production section, as an operator's file may have: --env reaches wrangler only then.
    writeFileSync(config, `${readFileSync(path.join(root, "wrangler.toml"), "utf8")}\n[env.production]\n`);

    const first = runSetup();
    const env = ["--env", "production"];
    expect(first.calls.map((c) => c.args)).toEqual([
      ["d1", "list", "--json"],
      ["d1", "create", "clipjobs"],
      ["r2", "bucket", "list"],
      ["r2", "bucket", "create", "clipjobs-clips"],
      ["r2", "bucket", "create", "clipjobs-uploads"],
      ["queues", "list"],
      ["queues", "create", "clipjobs-jobs"],
      ["queues", "create", "clipjobs-jobs-dlq"],
      ["queues", "create", "clipjobs-webhooks"],
      ["queues", "create", "clipjobs-webhooks-dlq"],
      ["secret", "list", "--format", "json", ...env],
      ["secret", "put", "ADMIN_TOKEN", ...env],
      ["secret", "put", "ENGINE_SIGNING_KEY", ...env],
      ["secret", "put", "CALLBACK_TOKEN_SECRET", ...env],
      ["secret", "put", "COOKIES_KEY", ...env],
      ["d1", "migrations", "apply", "clipjobs", "--remote", ...env],
    ]);
    // Secret values went on stdin only, and appear nowhere in the output.
    expect(first.calls.filter((c) => c.args[1] === "put").every((c) => c.stdin)).toBe(true);
    const state = JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8")) as { secrets: Record<string, string> };
    for (const value of Object.values(state.secrets)) {
      expect(value.length).toBeGreaterThanOrEqual(32);
      expect(first.stdout).not.toContain(value);
    }
    expect(readFileSync(config, "utf8")).toMatch(/^database_id = "4f1c2a9e-1111-4222-8333-123456789abc"$/m);

    const tomlAfterFirst = readFileSync(config, "utf8");
    const second = runSetup();
    expect(second.calls.map((c) => c.args)).toEqual([
      ["d1", "list", "--json"],
      ["r2", "bucket", "list"],
      ["queues", "list"],
      ["secret", "list", "--format", "json", ...env],
      ["d1", "migrations", "apply", "clipjobs", "--remote", ...env],
    ]);
    expect(readFileSync(config, "utf8")).toBe(tomlAfterFirst);
    expect(JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8"))).toEqual(state);
  });
});

