/**
 * The `clipjobs` command line against the real local stack, run as a user
 * runs it (node client/bin/clipjobs.mjs, what `npx clipjobs` starts), with
 * only CLIPJOBS_URL and CLIPJOBS_API_KEY. The typed client sets up the saved
 * configuration, so it is exercised against the real Worker too.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ClipjobsClient } from "../../client/src/index.ts";
import { AdminClient } from "../../scripts/lib/admin-client.ts";
import { freePort } from "../../scripts/local-stack/ports.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { scratchDir } from "./harness/cdn.ts";
import { TALK_20S, talkSource } from "./harness/media.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const BIN = fileURLToPath(new URL("../../client/bin/clipjobs.mjs", import.meta.url));
const TEST_TIMEOUT = { timeout: 300_000 };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function clipjobs(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

let stack: SharedStackInfo;
let sources: SourceServer;
let talkUrl: string;
let apiKey: string;
let env: Record<string, string>;
const scratch = scratchDir();

beforeAll(async () => {
  const [info, server, talk] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_20S)]);
  stack = info;
  sources = server;
  talkUrl = sources.addFile("cli-talk.mp4", talk.path);
  const email = `cli-${Date.now()}-${randomBytes(4).toString("hex")}@example.test`;
  apiKey = (await new AdminClient(stack.workerUrl, stack.adminToken).createAccount(email, "pro")).api_key;
  env = { CLIPJOBS_URL: stack.workerUrl, CLIPJOBS_API_KEY: apiKey };
});

afterAll(async () => {
  await sources?.close();
  scratch.remove();
});

describe("clipjobs", TEST_TIMEOUT, () => {
  test("--help lists every command and exits 0", async () => {
    const run = await clipjobs(["--help"], {});
    expect(run.code).toBe(0);
    for (const command of ["submit", "jobs", "job", "cancel", "usage", "configs", "CLIPJOBS_URL", "CLIPJOBS_API_KEY"]) expect(run.stdout).toContain(command);
  });

  test("usage and configs print tables; a configuration saved through the typed client shows up", async () => {
    const usage = await clipjobs(["usage"], env);
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.stdout).toMatch(/^plan\s+remaining/m);
    expect(usage.stdout).toMatch(/^pro\s+600\s+600/m);

    expect((await clipjobs(["configs"], env)).stdout).toContain("No saved configurations.");
    const client = new ClipjobsClient({ baseUrl: stack.workerUrl, apiKey });
    await client.putConfig("one-short", { resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 });
    const configs = await clipjobs(["configs"], env);
    expect(configs.stdout).toMatch(/^one-short\s+9:16\s+720p\s+5-10s\s+1\s+center$/m);

    // The problem's field errors are printed under its code and detail.
    const invalid = await client.putConfig("bad", { max_clip_seconds: 8 }).catch((error: unknown) => error);
    expect(invalid).toMatchObject({ code: "invalid_request", status: 400 });
  });

  test("submit --wait --download shows progress, prints the clip table and saves the clips", async () => {
    const dir = join(scratch.dir, "clips");
    const run = await clipjobs(["submit", talkUrl, "--type", "podcast", "--config", "one-short", "--wait", "--download", dir], env);
    expect(run.code, run.stderr).toBe(0);
    // Not a terminal: one progress line per change, ending at 100%.
    const bars = run.stderr.split("\n").filter((line) => /^\[[#-]+\]\s+\d+%/.test(line));
    expect(bars.length).toBeGreaterThanOrEqual(2);
    expect(bars.at(-1)).toMatch(/100%\s+completed$/);
    const jobId = /^(job_\w+)\s+completed/m.exec(run.stdout)?.[1];
    expect(jobId).toBeDefined();
    expect(run.stdout).toMatch(/^#\s+start\s+end\s+length\s+score\s+reasons\s+url$/m);
    expect(run.stdout).toMatch(/^1\s+\d+:\d\d\.\d\s+\d+:\d\d\.\d\s+\d+\.\ds\s+[01]\.\d\d\s+.+\s+http:\/\/\S+\.mp4$/m);
    const files = await readdir(dir);
    expect(files).toEqual([`${jobId}-01.mp4`]);
    expect((await stat(join(dir, files[0]!))).size).toBeGreaterThan(1000);

    const listed = await clipjobs(["jobs", "--limit", "5"], env);
    expect(listed.stdout).toMatch(new RegExp(`^${jobId}\\s+completed`, "m"));
    const shown = await clipjobs(["job", jobId!, "--json"], env);
    expect(JSON.parse(shown.stdout)).toMatchObject({ job_id: jobId, status: "completed", clips_count: 1 });
  });

  test("submit --json answers the queued job; cancel cancels it; jobs --status shows it", async () => {
    const submitted = await clipjobs(["submit", talkUrl, "--type", "lecture", "--json"], env);
    expect(submitted.code, submitted.stderr).toBe(0);
    const job = JSON.parse(submitted.stdout) as { job_id: string; status: string };
    expect(job.status).toBe("queued");
    const canceled = await clipjobs(["cancel", job.job_id], env);
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(canceled.stdout.trim()).toBe(`${job.job_id}  canceled`);
    const listed = await clipjobs(["jobs", "--status", "canceled"], env);
    expect(listed.stdout).toMatch(new RegExp(`^${job.job_id}\\s+canceled`, "m"));
  });

  test("errors print the problem's code and detail and exit 1; usage mistakes exit 2", async () => {
    const missing = await clipjobs(["job", "job_doesnotexist123"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: No job job_doesnotexist123\./m);

    const badType = await clipjobs(["submit", talkUrl, "--type", "cooking"], env);
    expect(badType.code).toBe(1);
    expect(badType.stderr).toMatch(/^error: invalid_video_type: .*podcast, lecture, gaming, sports, vlog, general/m);

    const tooMany = await clipjobs(["jobs", "--limit", "500"], env);
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toMatch(/^error: invalid_request: The query string is invalid\.\n  limit: .+$/m);

    const noKey = await clipjobs(["usage"], { CLIPJOBS_URL: stack.workerUrl, CLIPJOBS_API_KEY: "ck_live_wrong" });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/^error: unauthorized: /m);

    const closed = `http://127.0.0.1:${await freePort()}`;
    const offline = await clipjobs(["usage"], { CLIPJOBS_URL: closed, CLIPJOBS_API_KEY: apiKey });
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain(`error: network_error: Could not reach ${closed}: connect ECONNREFUSED`);

    const noType = await clipjobs(["submit", talkUrl], env);
    expect(noType.code).toBe(2);
    expect(noType.stderr).toContain("--type is required");
  });
});
