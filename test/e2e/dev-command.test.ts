/**
 * `npm run dev` (scripts/dev.ts over the one local-stack launcher) as a
 * person runs it: it serves the API, the dashboard and the engine, and
 * Ctrl-C, or the death of one of its processes, leaves no wrangler, workerd
 * or engine process behind. Ports and directory are its own (--port,
 * --engine-port, --dir), so it runs beside any other stack.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { pollUntil } from "../../scripts/local-stack/poll.ts";
import { freePort, portInUse } from "../../scripts/local-stack/ports.ts";
import { projectRoot } from "./harness/shared-stack-config.ts";

interface DevRun {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const dir = mkdtempSync(join(tmpdir(), "clipjobs-dev-test-"));
const running: DevRun[] = [];

afterEach(() => {
  // A failed test must not leave its stack behind: SIGINT is dev's own clean stop.
  for (const run of running.splice(0)) if (run.child.exitCode === null && run.child.pid) process.kill(-run.child.pid, "SIGINT");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts scripts/dev.ts in a process group of its own, as a terminal would (Ctrl-C goes to the group). */
function startDev(args: string[]): DevRun {
  const child = spawn(process.execPath, ["--import", "tsx", join(projectRoot, "scripts", "dev.ts"), ...args], {
    cwd: projectRoot,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  // "close", not "exit": at "exit" the child's last writes may still be in its pipes (Node's
  // child_process docs), so a message printed just before exiting could be missing from `output`.
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const run = { child, output: () => output, exited };
  running.push(run);
  return run;
}

/**
 * How long dev may take to say it is ready: longer than its own waits add up
 * to (the migrations, which have no deadline, then up to 90 s for the
 * Worker's health), which on a 2-core machine under heavy load took over
 * 180 s. It only bounds a hang.
 */
const READY_WITHIN_MS = 300_000;

async function waitForReady(run: DevRun): Promise<void> {
  try {
    await pollUntil(
      async () => {
        if (run.child.exitCode !== null) throw new Error(`npm run dev exited with ${run.child.exitCode}:\n${run.output()}`);
        // The summary's last line: "[dev] ready" is written first, and the lines after it may still be in the pipe.
        return run.output().includes("[dev] Ctrl-C stops") ? true : undefined;
      },
      { timeoutMs: READY_WITHIN_MS, intervalMs: 250, description: "npm run dev to say it is ready" },
    );
  } catch (error) {
    // What dev printed says which step it was waiting on.
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- npm run dev printed:\n${run.output().slice(-3000)}`);
  }
}

/** Every process below `root` right now (ps works on Linux and macOS). */
function descendants(root: number): number[] {
  const rows = execFileSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [pid, ppid] of rows) {
      if (ppid === parent && !found.includes(pid)) {
        found.push(pid);
        queue.push(pid);
      }
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes still alive a moment after their parents went (an orphan is reaped by init, not at once). */
async function leftBehind(pids: number[]): Promise<string[]> {
  const deadline = Date.now() + 5000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  return pids.filter(alive).map((pid) => `${pid} ${commandOf(pid)}`);
}

function commandOf(pid: number): string {
  try {
    return execFileSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

describe("npm run dev", { timeout: READY_WITHIN_MS + 120_000 }, () => {
  test("serves the API, the dashboard and the engine; Ctrl-C stops everything it started", async () => {
    const [workerPort, enginePort] = [await freePort(), await freePort()];
    const run = startDev(["--port", String(workerPort), "--engine-port", String(enginePort), "--dir", join(dir, "full")]);
    await waitForReady(run);

    expect((await fetch(`http://127.0.0.1:${workerPort}/health`)).status).toBe(200);
    const dashboard = await fetch(`http://127.0.0.1:${workerPort}/dashboard`);
    expect(dashboard.status).toBe(200);
    expect(dashboard.headers.get("content-type")).toContain("text/html");
    const engine = (await (await fetch(`http://127.0.0.1:${enginePort}/health`)).json()) as { ok: boolean };
    expect(engine.ok).toBe(true);
    // The Worker reaches the engine and gets called back on the ports given, not the default ones.
    expect(run.output()).toContain(`engine     http://127.0.0.1:${enginePort}`);

    const started = descendants(run.child.pid!);
    const commands = started.map(commandOf).join("\n");
    expect(commands).toContain("workerd");
    // The engine runs the bundle its Container image runs, built into the stack's directory.
    expect(commands).toContain(join(dir, "full", "engine-bundle", "server.mjs"));

    process.kill(-run.child.pid!, "SIGINT");
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain("[dev] SIGINT: stopping");
    expect(await leftBehind(started), "processes left behind").toEqual([]);
    expect(await portInUse(workerPort)).toBe(false);
    expect(await portInUse(enginePort)).toBe(false);
  });

  test("when the Worker dies, dev says so, stops the rest and exits non-zero", async () => {
    const workerPort = await freePort();
    const run = startDev(["--no-engine", "--port", String(workerPort), "--dir", join(dir, "worker-only")]);
    await waitForReady(run);
    expect(run.output()).toContain("not started (--no-engine)");
    const started = descendants(run.child.pid!);
    const wrangler = started.find((pid) => commandOf(pid).includes("wrangler.js dev"));
    expect(wrangler).toBeDefined();

    // The Worker's whole process group dies at once, as on a crash.
    process.kill(-wrangler!, "SIGKILL");
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/the Worker \(wrangler dev\) exited \(killed\); see .*worker\.log; stopping the rest/);
    expect(await leftBehind(started), "processes left behind").toEqual([]);
  });
});
