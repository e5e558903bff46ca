/**
 * Redocly's recommended rules on the served document (client/openapi.json,
 * kept equal to it by test/worker/openapi-snapshot.test.ts): no error and no
 * warning.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { DOCUMENT_PATH } from "../codegen/generate-types.ts";

const REDOCLY = fileURLToPath(new URL("../../node_modules/@redocly/cli/bin/cli.js", import.meta.url));

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

it("passes `redocly lint --extends recommended` with no error and no warning", () => {
  const run = spawnSync(process.execPath, [REDOCLY, "lint", "--extends", "recommended", "--format", "json", DOCUMENT_PATH], {
    encoding: "utf8",
    // No telemetry, no update check: the test must not touch the network.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
    timeout: 60_000,
  });
  const report = JSON.parse(run.stdout) as LintReport;
  const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
  expect(problems).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  expect(run.status).toBe(0);
});
