/**
 * The `clipjobs` command line against the real local stack, run as a user
 * runs it (node client/bin/clipjobs.mjs, what `npx clipjobs` starts), with
 * only CLIPJOBS_URL and CLIPJOBS_API_KEY (and a HOME of its own, where
 * unfinished uploads are remembered). The typed client sets up the saved
 * configuration, so it is exercised against the real Worker too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFile, readdir, readFile, stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ClipjobsClient } from "../../client/src/index.ts";
import { AdminClient } from "../../scripts/lib/admin-client.ts";
import { freePort } from "../../scripts/local-stack/ports.ts";
import { pollUntil } from "../../scripts/local-stack/poll.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { toSrt } from "./harness/captions.ts";
import { scratchDir } from "./harness/cdn.ts";
import { TALK_20S, talkSource } from "./harness/media.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";
import { startStallingProxy } from "./harness/stalling-proxy.ts";

const BIN = fileURLToPath(new URL("../../client/bin/clipjobs.mjs", import.meta.url));
const TEST_TIMEOUT = { timeout: 300_000 };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The run, and the child while it runs (for a test that interrupts it). */
function start(args: string[], env: Record<string, string>): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: scratch.dir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const done = new Promise<Run>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done };
}

function clipjobs(args: string[], env: Record<string, string>): Promise<Run> {
  return start(args, env).done;
}

/** What the talk says, as the captions file given with --captions-url tells the engine. */
const SENTENCES = [
  { start: 1, end: 4, text: "Short clips travel further than long ones." },
  { start: 5, end: 9.5, text: "Start with the answer, then give the reason." },
  { start: 11, end: 15, text: "End on the line people will repeat." },
];
const SRT = toSrt(SENTENCES);
const ONE_SHORT = "one-short";
const ONE_SHORT_CONFIG = { resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 } as const;

/** The lines of a progress bar printed to a pipe, and their percentages. */
function progressLines(stderr: string): { lines: string[]; percents: number[] } {
  const lines = stderr.split("\n").filter((line) => /^\[[#-]+\]\s+\d+%/.test(line));
  return { lines, percents: lines.map((line) => Number(/(\d+)%/.exec(line)![1])) };
}

let stack: SharedStackInfo;
let sources: SourceServer;
let talkUrl: string;
let talkPath: string;
let captionsUrl: string;
let apiKey: string;
let env: Record<string, string>;
const scratch = scratchDir();

async function newKey(): Promise<string> {
  const email = `cli-${Date.now()}-${randomBytes(4).toString("hex")}@example.test`;
  return (await new AdminClient(stack.workerUrl, stack.adminToken).createAccount(email, "pro")).api_key;
}

beforeAll(async () => {
  const [info, server, talk] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_20S)]);
  stack = info;
  sources = server;
  talkUrl = sources.addFile("cli-talk.mp4", talk.path);
  talkPath = talk.path;
  captionsUrl = sources.addText("cli-talk.srt", SRT, "application/x-subrip");
  apiKey = await newKey();
  env = { CLIPJOBS_URL: stack.workerUrl, CLIPJOBS_API_KEY: apiKey };
  // One short clip per job: the configuration the jobs below are submitted with.
  await new ClipjobsClient({ baseUrl: stack.workerUrl, apiKey }).putConfig(ONE_SHORT, ONE_SHORT_CONFIG);
});

afterAll(async () => {
  await sources?.close();
  scratch.remove();
});

describe("clipjobs", TEST_TIMEOUT, () => {
  test("--help lists every command and exits 0", async () => {
    const run = await clipjobs(["--help"], {});
    expect(run.code).toBe(0);
    for (const command of ["submit", "jobs", "job", "cancel", "transcript", "download", "usage", "configs", "webhooks", "CLIPJOBS_URL", "CLIPJOBS_API_KEY"]) {
      expect(run.stdout).toContain(`${command}`);
    }
  });

  test("usage and configs print tables; a configuration saved through the typed client shows up", async () => {
    // An account of its own: a new account's figures and its empty list of configurations.
    const key = await newKey();
    const own = { CLIPJOBS_URL: stack.workerUrl, CLIPJOBS_API_KEY: key };
    const usage = await clipjobs(["usage"], own);
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.stdout).toMatch(/^plan\s+remaining/m);
    expect(usage.stdout).toMatch(/^pro\s+600\s+600/m);

    expect((await clipjobs(["configs"], own)).stdout).toContain("No saved configurations.");
    const client = new ClipjobsClient({ baseUrl: stack.workerUrl, apiKey: key });
    await client.putConfig("one-short", ONE_SHORT_CONFIG);
    const configs = await clipjobs(["configs"], own);
    expect(configs.stdout).toMatch(/^one-short\s+9:16\s+720p\s+5-10s\s+1\s+auto$/m);

    // The problem's field errors are printed under its code and detail.
    const invalid = await client.putConfig("bad", { max_clip_seconds: 8 }).catch((error: unknown) => error);
    expect(invalid).toMatchObject({ code: "invalid_request", status: 400 });
  });

  test("submit --wait --download shows progress, prints the clip table and saves the clips", async () => {
    const dir = join(scratch.dir, "clips");
    const run = await clipjobs(["submit", talkUrl, "--type", "podcast", "--config", ONE_SHORT, "--captions-url", captionsUrl, "--wait", "--download", dir], env);
    expect(run.code, run.stderr).toBe(0);
    // Not a terminal: one progress line per change seen. How many changes a read sees depends on the job's
    // speed (a fast job ends within the first held read: a single line), so the test asserts what every
    // run shows: at least one line, never going back, the last one 100% completed.
    const bars = progressLines(run.stderr);
    expect(bars.lines.length, run.stderr).toBeGreaterThanOrEqual(1);
    expect(bars.percents).toEqual([...bars.percents].sort((a, b) => a - b));
    expect(bars.lines.at(-1)).toMatch(/100%\s+completed$/);
    const jobId = /^(job_\w+)\s+completed/m.exec(run.stdout)?.[1];
    expect(jobId).toBeDefined();
    expect(run.stdout).toMatch(/^#\s+start\s+end\s+length\s+score\s+reasons\s+url$/m);
    expect(run.stdout).toMatch(/^1\s+\d+:\d\d\.\d\s+\d+:\d\d\.\d\s+\d+\.\ds\s+[01]\.\d\d\s+.+\s+http:\/\/\S+\.mp4$/m);
    const files = (await readdir(dir)).sort();
    expect(files).toEqual([`${jobId}-01.mp4`, `${jobId}-01.srt`, `${jobId}-01.vtt`]);
    expect((await stat(join(dir, `${jobId}-01.mp4`))).size).toBeGreaterThan(1000);

    const listed = await clipjobs(["jobs", "--limit", "5"], env);
    expect(listed.stdout).toMatch(new RegExp(`^${jobId}\\s+completed`, "m"));
    const shown = await clipjobs(["job", jobId!, "--json"], env);
    expect(JSON.parse(shown.stdout)).toMatchObject({ job_id: jobId, status: "completed", clips_count: 1 });
  });

  describe("a completed job", () => {
    /** A job of its own for these commands, completed through the typed client; the hook fails if it does not complete. */
    let completedJobId = "";
    beforeAll(async () => {
      const client = new ClipjobsClient({ baseUrl: stack.workerUrl, apiKey });
      const submitted = await client.submitJob({ video_url: talkUrl, video_type: "podcast", config_name: ONE_SHORT, captions_url: captionsUrl });
      const job = await client.waitForJob(submitted.job_id);
      if (job.status !== "completed") throw new Error(`the fixture job ${job.job_id} ended ${job.status}: ${JSON.stringify(job)}`);
      completedJobId = job.job_id;
    }, TEST_TIMEOUT.timeout);

    test("transcript prints the completed job's transcript as text, SubRip, WebVTT and JSON", async () => {
      const txt = await clipjobs(["transcript", completedJobId], env);
      expect(txt.code, txt.stderr).toBe(0);
      expect(txt.stdout).toBe(`${SENTENCES.map((line) => line.text).join("\n")}\n`);

      const srt = await clipjobs(["transcript", completedJobId, "--format", "srt"], env);
      expect(srt.stdout).toMatch(/^1\n00:00:01,000 --> 00:00:04,000\nShort clips travel further than long ones\.\n/);
      const vtt = await clipjobs(["transcript", completedJobId, "--format", "vtt"], env);
      expect(vtt.stdout.startsWith("WEBVTT\n\n")).toBe(true);
      // WebVTT lines wrap at 42 characters.
      expect(vtt.stdout).toMatch(/^00:00:05\.000 --> 00:00:09\.500\nStart with the answer, then give the\nreason\.$/m);

      const json = JSON.parse((await clipjobs(["transcript", completedJobId, "--json"], env)).stdout) as { source: string; sentences: { text: string; start: number; end: number }[] };
      expect(json.source).toBe("captions_url");
      expect(json.sentences.map(({ text, start, end }) => ({ text, start, end }))).toEqual(SENTENCES);
      const wrapped = JSON.parse((await clipjobs(["transcript", completedJobId, "--format", "vtt", "--json"], env)).stdout) as Record<string, string>;
      expect(wrapped).toEqual({ job_id: completedJobId, format: "vtt", content: vtt.stdout });

      expect((await clipjobs(["transcript", completedJobId, "--format", "docx"], env)).code).toBe(2);
    });

    test("download saves a completed job's clips and captions into DIR and prints each path", async () => {
      const dir = join(scratch.dir, "downloaded");
      const run = await clipjobs(["download", completedJobId, dir], env);
      expect(run.code, run.stderr).toBe(0);
      const expected = ["mp4", "vtt", "srt"].map((ext) => join(dir, `${completedJobId}-01.${ext}`));
      expect(run.stdout.trim().split("\n")).toEqual(expected);
      const mp4 = await readFile(expected[0]!);
      expect(mp4.subarray(4, 8).toString("latin1")).toBe("ftyp");
      expect((await readFile(expected[1]!, "utf8")).startsWith("WEBVTT")).toBe(true);

      const json = JSON.parse((await clipjobs(["download", completedJobId, dir, "--json"], env)).stdout) as { files: string[] };
      expect(json).toEqual({ job_id: completedJobId, files: expected });
    });
  });

  test("submit ./file uploads it with a progress bar and submits it; an interrupted upload resumes on the next run", async () => {
    // A file of its own (the fingerprint of an upload is its path, size and time), and an account of its own.
    const file = join(scratch.dir, "Team standup.mp4");
    await copyFile(talkPath, file);
    const size = (await stat(file)).size;
    const key = await newKey();
    const proxy = await startStallingProxy(stack.workerUrl, Math.floor(size / 2));
    try {
      const proxied = { CLIPJOBS_URL: proxy.url, CLIPJOBS_API_KEY: key };
      const first = start(["submit", file, "--type", "podcast"], proxied);
      await proxy.stalled;
      first.child.kill("SIGINT");
      const interrupted = await first.done;
      expect(interrupted.code).not.toBe(0);
      expect(interrupted.stderr).toContain("Uploading Team standup.mp4; if interrupted, run the same command again to resume.");
      const state = JSON.parse(await readFile(join(scratch.dir, ".local", "state", "clipjobs", "uploads.json"), "utf8")) as Record<string, { uploadUrl: string }>;
      expect(Object.values(state)).toHaveLength(1);
      // The client's exit is not the server's end of its PATCH: the upload's object keeps what arrived once it
      // sees the connection drop, and until then HEAD still answers the offset from before (0), so a resume
      // sent first would start over. Wait for the stored offset (asked of the Worker directly: the proxy is armed).
      const uploadPath = new URL(Object.values(state)[0]!.uploadUrl).pathname;
      await pollUntil(
        async () => {
          const head = await fetch(`${stack.workerUrl}${uploadPath}`, { method: "HEAD", headers: { Authorization: `Bearer ${key}`, "Tus-Resumable": "1.0.0" } });
          return Number(head.headers.get("Upload-Offset")) > 0 ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, description: "the interrupted PATCH's bytes stored" },
      );

      proxy.disarm();
      const sentBefore = proxy.forwarded();
      const second = await clipjobs(["submit", file, "--type", "podcast"], proxied);
      expect(second.code, second.stderr).toBe(0);
      const resumed = /Resuming the earlier upload at (\d+) of (\d+) bytes\./.exec(second.stderr);
      expect(resumed, second.stderr).not.toBeNull();
      const offset = Number(resumed![1]);
      expect(offset).toBeGreaterThan(0);
      expect(Number(resumed![2])).toBe(size);
      // Only what the server did not have went over the wire again (plus the requests' headers).
      expect(proxy.forwarded() - sentBefore).toBeLessThan(size - offset + 16_384);
      // Not a terminal: one progress line per tenth, ending at 100%.
      const bars = second.stderr.split("\n").filter((line) => /^\[[#-]+\]\s+\d+%\s+uploading Team standup\.mp4/.test(line));
      expect(bars.at(-1)).toMatch(/100%\s+uploading Team standup\.mp4 \(\d+\.\d MB of \d+\.\d MB\)$/);
      // The finished upload is forgotten.
      expect(Object.keys(JSON.parse(await readFile(join(scratch.dir, ".local", "state", "clipjobs", "uploads.json"), "utf8")) as object)).toEqual([]);

      const [jobId, status] = second.stdout.trim().split(/\s+/);
      expect(status).toBe("queued");
      const job = new ClipjobsClient({ baseUrl: stack.workerUrl, apiKey: key });
      expect(await job.getJob(jobId!)).toMatchObject({ title: "Team standup.mp4", video_url: null, upload_id: expect.stringMatching(/^upl_/) });
      await job.cancelJob(jobId!);
    } finally {
      await proxy.close();
    }

    const missing = await clipjobs(["submit", join(scratch.dir, "nope.mp4"), "--type", "podcast"], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("is neither an http(s) URL nor a file");
  });

  test("webhooks add, list, test, deliveries and remove", async () => {
    const received: string[] = [];
    let onDelivery: () => void = () => undefined;
    const delivered = new Promise<void>((resolve) => (onDelivery = resolve));
    const receiver: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        received.push(body);
        res.writeHead(204).end();
        onDelivery();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const hooks = { CLIPJOBS_URL: stack.workerUrl, CLIPJOBS_API_KEY: await newKey() };
    try {
      const added = await clipjobs(["webhooks", "add", url, "--events", "job.completed,job.failed", "--description", "chat bot"], hooks);
      expect(added.code, added.stderr).toBe(0);
      const webhookId = /^(\S+)\s/.exec(added.stdout)![1]!;
      expect(added.stdout).toMatch(/^secret whsec_\S+$/m);
      expect(added.stderr).toContain("shown only now");

      const listed = await clipjobs(["webhooks", "list"], hooks);
      expect(listed.stdout).toMatch(new RegExp(`^${webhookId}\\s+yes\\s+job\\.completed,job\\.failed\\s+${url.replace(/[.]/g, "\\.")}\\s+chat bot$`, "m"));

      const tested = await clipjobs(["webhooks", "test", webhookId], hooks);
      expect(tested.code, tested.stderr).toBe(0);
      expect(tested.stdout).toMatch(/^\S+\s+webhook\.test\s+pending$/m);
      await delivered;
      expect(JSON.parse(received[0]!)).toMatchObject({ type: "webhook.test" });
      // The log records the answer once the attempt has been written back: wait for that, then read it with the CLI.
      const typed = new ClipjobsClient({ baseUrl: stack.workerUrl, apiKey: hooks.CLIPJOBS_API_KEY });
      const deadline = Date.now() + 60_000;
      while ((await typed.listWebhookDeliveries(webhookId)).deliveries[0]?.status !== "succeeded" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect((await clipjobs(["webhooks", "deliveries", webhookId], hooks)).stdout).toMatch(/^\S+\s+webhook\.test\s+succeeded\s+1\s+204\s+\S+$/m);

      const removed = await clipjobs(["webhooks", "remove", webhookId], hooks);
      expect(removed.stdout).toBe(`${webhookId}  deleted\n`);
      expect((await clipjobs(["webhooks", "list"], hooks)).stdout).toBe("No webhook endpoints.\n");
      const gone = await clipjobs(["webhooks", "remove", webhookId], hooks);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toMatch(/^error: not_found: /m);

      const badEvent = await clipjobs(["webhooks", "add", url, "--events", "job.exploded"], hooks);
      expect(badEvent.code).toBe(1);
      expect(badEvent.stderr).toMatch(/^error: invalid_webhook_event: /m);
      const unknown = await clipjobs(["webhooks", "rename", webhookId], hooks);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('unknown subcommand "rename"');
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
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

    const missingJson = await clipjobs(["job", "job_doesnotexist123", "--json"], env);
    expect(missingJson.code).toBe(1);
    expect(missingJson.stdout).toBe("");
    expect(JSON.parse(missingJson.stderr)).toMatchObject({ status: 404, code: "not_found", detail: "No job job_doesnotexist123." });

    const badType = await clipjobs(["submit", talkUrl, "--type", "cooking"], env);
    expect(badType.code).toBe(1);
    expect(badType.stderr).toMatch(/^error: invalid_video_type: .*podcast, lecture, gaming, sports, vlog, general/m);

    // A language the translation model lacks: the API's code and its allowed values, nothing submitted.
    const badLanguage = await clipjobs(["submit", talkUrl, "--type", "podcast", "--caption-language", "klingon"], env);
    expect(badLanguage.code).toBe(1);
    expect(badLanguage.stderr).toMatch(/^error: unsupported_language: .*\n  caption_language: .+$/m);

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
