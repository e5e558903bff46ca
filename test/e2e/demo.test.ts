/**
 * `npm run demo` itself, run as a newcomer would run it (scripts/demo.mjs),
 * on a stack of its own: a named file end to end, and a failing job.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { freePort } from "../../scripts/local-stack/ports.ts";
import { ffprobe } from "./harness/ffprobe.ts";
import { TALK_20S, talkSource } from "./harness/media.ts";
import { projectRoot } from "./harness/shared-stack-config.ts";

interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const demoDir = mkdtempSync(join(tmpdir(), "clipjobs-demo-test-"));

afterAll(() => rmSync(demoDir, { recursive: true, force: true }));

/** Runs the demo to its end, killed (and failing the test) if it outlives `timeoutMs`. */
function runDemo(args: string[], timeoutMs = 200_000): Promise<DemoRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(projectRoot, "scripts", "demo.mjs"), ...args], {
      cwd: projectRoot,
      env: { ...process.env, DEMO_DIR: demoDir, DEMO_PORTS: "auto" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // SIGINT is the demo's own clean stop: it takes its stack down with it.
    const timer = setTimeout(() => child.kill("SIGINT"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("npm run demo", { timeout: 300_000 }, () => {
  test("a named file: six stages, a table of clips on {cdn_url}, the credits used, clips saved locally", async () => {
    const talk = await talkSource(TALK_20S);
    const run = await runDemo([talk.path, "--type", "podcast", "--config", "square"]);
    expect(run.code, run.stderr).toBe(0);
    for (const stage of ["1/6", "2/6", "3/6", "4/6", "5/6", "6/6"]) expect(run.stdout).toContain(stage);
    // A local file goes through the upload API (tus), not a loopback server.
    expect(run.stdout).toMatch(/Uploaded as upl_[A-Za-z0-9]+ \(POST\/PATCH \/api\/v1\/uploads\)/);
    expect(run.stdout).toMatch(/^#\s+Start-End\s+Duration\s+Score\s+Title\s+Reasons\s+URL$/m);
    // A published clip: its own unguessable id on {cdn_url}, nothing of the job id (docs/architecture.md "Where a job's objects live").
    const row = /^1\s+(\d+:\d\d\.\d)-(\d+:\d\d\.\d)\s+([\d.]+) s\s+([\d.]+)\s+(.+?)\s+(http:\/\/127\.0\.0\.1:\d+\/cdn\/c\/[0-9A-Za-z]{22}\/clip\.mp4)$/m.exec(run.stdout);
    expect(row, run.stdout).not.toBeNull();
    const jobId = /^\s+(job_\w+): /m.exec(run.stdout)?.[1];
    expect(Number(row?.[4])).toBeLessThanOrEqual(1);
    // 20 s of source: one started minute.
    expect(run.stdout).toMatch(/Credits used: 1 \(usage 600 -> 599 of 600, plan pro\)/);

    const saved = join(demoDir, "clips", jobId ?? "", "clip-1.mp4");
    expect(existsSync(saved)).toBe(true);
    const probed = await ffprobe(saved);
    expect(probed.video).toEqual({ codec: "h264", width: 720, height: 720 });
    expect(probed.audio?.codec).toBe("aac");
  });

  test("a job that fails: non-zero exit naming the stage and the failure code", async () => {
    const run = await runDemo([`http://127.0.0.1:${await freePort()}/gone.mp4`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Demo failed at stage "processing": job job_\w+ failed \(source_unreachable: .+\)/);
  });

  test("a file that does not exist fails before anything starts", async () => {
    const run = await runDemo([join(demoDir, "no-such-video.mp4")]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Demo failed at stage "source": no such file');
    expect(run.stdout).not.toContain("1/6");
  });
});
