/**
 * The engine image production runs, built from container/Dockerfile and run
 * with podman as the Container binding runs it: the environment
 * engineEnvironment() gives it (verify key, callback base, HOST=0.0.0.0),
 * its unprivileged user, a read-only root file system with only the work
 * directory writable. The local Worker (wrangler dev, no engine of its own)
 * sends it signed StartJobs over real HTTP and receives its callbacks.
 *
 * Two settings differ from production, both because the container shares
 * this machine's network (rootful podman here has no route from a bridge to
 * the Worker on loopback): PORT is a free port instead of 8788, and
 * ALLOW_PRIVATE_SOURCES is true, since the test's sources are on loopback.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { compose, PEOPLE } from "../../container/test/helpers/faces-media.ts";
import { ocrBand } from "../../container/test/helpers/pixels.ts";
import { FINAL_STATUSES, type JobView } from "../../scripts/local-stack/api-client.ts";
import { newEngineKeys, verifyKeyOf } from "../../scripts/local-stack/engine-keys.ts";
import { PollAborted, pollUntil } from "../../scripts/local-stack/poll.ts";
import { freePort } from "../../scripts/local-stack/ports.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";
import { newAccount, type TestAccount } from "../e2e/harness/accounts.ts";
import { TALK_20S, TALK_75S, talkSource } from "../e2e/harness/media.ts";
import { projectRoot } from "../e2e/harness/shared-stack-config.ts";
import { ensureBaseImage } from "./base-stand-in.ts";
import { buildEngineImage, type BuiltImage } from "./engine-image.ts";
import { reportFigures } from "./figures.ts";
import { imageBytes, podman, podmanRun, podmanUsable, RUN_LIMITS } from "./podman.ts";

const say = (line: string): void => void process.stdout.write(`[image] ${line}\n`);
const workDir = join(projectRoot, ".tmp", "image");
const JOB_TIMEOUT_MS = 300_000;
/** One captioned vertical clip at full resolution. */
const CAPTIONED = { aspect_ratio: "9:16", resolution: 1080, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, reframe: "center", captions: "both" } as const;
const FACES = { aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, reframe: "faces", captions: "off" } as const;
/** Four clips from the 75 s source: a job that spends a while rendering. */
const SEVERAL = { aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 8, max_clip_seconds: 10, max_clips: 4, reframe: "center", captions: "off" } as const;

const usable = await podmanUsable();
if (!usable.ok) say(`skipped: podman cannot run containers on this machine (${usable.reason})`);

const containerName = `clipjobs-image-test-${process.pid}-${randomBytes(3).toString("hex")}`;
let image: BuiltImage;
let stack: LocalStack;
let sources: SourceServer;
let account: TestAccount;
let enginePort: number;
let talkUrl: string;
let longPath: string;
let facesUrl: string;
let captionsUrl: string;

/** Commands of the processes running in the container (empty once it has stopped). */
async function processesInContainer(): Promise<string[]> {
  const top = await podmanRun(["top", containerName, "comm"]);
  if (top.code !== 0) return [];
  return top.stdout.split("\n").slice(1).map((line) => line.trim()).filter(Boolean);
}

async function engineHealth(): Promise<{ ok: boolean; backend: string; active_jobs: number }> {
  const response = await fetch(`http://127.0.0.1:${enginePort}/health`);
  return (await response.json()) as { ok: boolean; backend: string; active_jobs: number };
}

/** Submits a job and resolves once ffmpeg runs inside the container for it. */
async function submitAndWaitForRender(name: string, config: string): Promise<string> {
  const submitted = await account.client.submit({ video_url: sources.addFile(name, longPath), video_type: "podcast", config_name: config });
  await pollUntil(async () => {
    if ((await processesInContainer()).includes("ffmpeg")) return true;
    const job = await account.client.getJob(submitted.job_id);
    if (FINAL_STATUSES.includes(job.status)) throw new PollAborted(`${submitted.job_id} ended ${job.status} before ffmpeg was seen: ${JSON.stringify(job.error)}`);
    return undefined;
  }, {
    timeoutMs: JOB_TIMEOUT_MS,
    intervalMs: 200,
    description: `ffmpeg to run in the container for ${submitted.job_id}`,
  });
  expect((await account.client.getJob(submitted.job_id)).status).toBe("processing");
  return submitted.job_id;
}

async function startContainer(verifyKey: string): Promise<number> {
  // Should this process end without its afterAll (interrupted), the container goes with it.
  process.once("exit", () => void spawnSync("podman", ["rm", "--force", "--volumes", "--time", "0", containerName], { stdio: "ignore" }));
  const started = performance.now();
  await podman([
    "run", "--detach", "--name", containerName, ...RUN_LIMITS,
    "--network", "host",
    // The image's files are read-only; the engine writes only its work directory (a volume
    // that takes the image's ownership of it, removed with the container) and /tmp.
    "--read-only", "--volume", "/var/lib/clipjobs/work",
    "--env", `ENGINE_VERIFY_KEY=${verifyKey}`,
    "--env", `CALLBACK_BASE=${stack.workerUrl}`,
    "--env", "ALLOW_PRIVATE_SOURCES=true",
    "--env", "HOST=0.0.0.0",
    "--env", `PORT=${enginePort}`,
    "--env", "PROGRESS_HEARTBEAT_SECONDS=1",
    image.reference,
  ]);
  await pollUntil(async () => ((await fetch(`http://127.0.0.1:${enginePort}/health`).catch(() => undefined))?.ok ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 50,
    description: "the engine in its container to answer /health",
  });
  return (performance.now() - started) / 1000;
}

describe.skipIf(!usable.ok)("the engine image", () => {
  let startToHealth = 0;

  beforeAll(async () => {
    mkdirSync(workDir, { recursive: true });
    const base = await ensureBaseImage(join(workDir, "base"), say);
    image = await buildEngineImage(projectRoot, join(workDir, "build"), say);
    const bytes = await imageBytes(image.reference);
    say(`built ${image.reference} in ${(image.buildMs / 1000).toFixed(0)} s: ${(bytes / 1e6).toFixed(0)} MB`);

    const [talk, long, server, port] = await Promise.all([talkSource(TALK_20S), talkSource(TALK_75S), startSourceServer(), freePort()]);
    sources = server;
    enginePort = port;
    longPath = long.path;
    talkUrl = sources.addFile("talk.mp4", talk.path);
    // A cue over every phrase, so whichever span the clip takes carries words to read back.
    const cues = talk.facts.phrases.map((p, i) => `${i + 1}\n${srt(p.start)} --> ${srt(p.end)}\nCAPTION NUMBER ${i + 1}\n`);
    captionsUrl = sources.addText("talk.srt", cues.join("\n"), "application/x-subrip");
    const facesPath = join(workDir, "faces.mp4");
    await compose(facesPath, { seconds: 10, width: 640, height: 360, fps: 15, distractor: false, people: [{ person: PEOPLE.anna, width: 130, path: [[0, 120, 120], [10, 400, 130]] }] });
    facesUrl = sources.addFile("faces.mp4", facesPath);

    const keys = newEngineKeys();
    stack = await startLocalStack({
      root: projectRoot,
      dir: join(workDir, `stack-${process.pid}`),
      fresh: true,
      ephemeral: true,
      engine: false,
      enginePort,
      vars: { ...keys, ENGINE_SILENCE_TIMEOUT_SECONDS: "60" },
    });
    startToHealth = await startContainer(verifyKeyOf(keys.ENGINE_SIGNING_KEY));
    say(`podman run to /health: ${startToHealth.toFixed(2)} s`);
    reportFigures(join(workDir, "figures.json"), {
      at: new Date().toISOString(),
      imageBytes: bytes,
      buildSeconds: image.buildMs / 1000,
      startToHealthSeconds: startToHealth,
      base,
      ytdlp: image.ytdlpSource,
    }, say);

    account = await newAccount(stack);
    for (const [name, config] of [["captioned", CAPTIONED], ["faces", FACES], ["several", SEVERAL]] as const) {
      const saved = await account.client.request("PUT", `/api/v1/configs/${name}`, { body: config });
      expect([200, 201], JSON.stringify(saved.body)).toContain(saved.status);
    }
  });

  afterAll(async () => {
    await podmanRun(["rm", "--force", "--volumes", "--time", "0", containerName]);
    await stack?.stop();
    await sources?.close();
    const left = await podmanRun(["ps", "--all", "--quiet", "--filter", `name=${containerName}`]);
    expect(left.stdout.trim()).toBe("");
  });

  test("answers /health as its unprivileged user, with the native ffmpeg", async () => {
    expect(await engineHealth()).toEqual({ ok: true, backend: "native", active_jobs: 0 });
    const users = (await podman(["top", containerName, "user", "comm"])).split("\n").slice(1).filter((line) => line.trim());
    expect(users.length).toBeGreaterThan(0);
    for (const line of users) expect(line.trim().split(/\s+/)[0]).toBe("node");
    // The image's own HEALTHCHECK passes (podman runs it on demand; its timers need systemd).
    expect((await podmanRun(["healthcheck", "run", containerName])).code).toBe(0);
    // The image's files cannot be written, even by the engine.
    const write = await podmanRun(["exec", containerName, "touch", "/app/written"]);
    expect(write.code).not.toBe(0);
  });

  test("a captioned job completes: a 1080x1920 clip with captions burned in its fonts and as files", async () => {
    const submitted = await account.client.submit({ video_url: talkUrl, video_type: "podcast", config_name: "captioned", captions_url: captionsUrl });
    const job = await account.client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    const clip = job.clips![0]!;
    expect(clip).toMatchObject({ width: 1080, height: 1920, captions_burned: true });
    const video = await fetch(clip.url);
    expect(video.status).toBe(200);
    const file = join(workDir, `captioned-${process.pid}.mp4`);
    await writeFile(file, new Uint8Array(await video.arrayBuffer()));
    // Drawn by libass inside the image with the image's fonts: read back from the frames' lower half.
    const read: string[] = [];
    for (let t = 0.5; t < clip.duration_seconds; t += 1.5) {
      read.push(...(await ocrBand(file, t, { top: 960, bottom: 1920 }, "eng", 1)).map((word) => word.text.toUpperCase()));
    }
    await rm(file, { force: true });
    expect(read).toEqual(expect.arrayContaining(["CAPTION", "NUMBER"]));
    const files = (clip as { captions?: { vtt_url: string } }).captions;
    // The caption file carries the same words (cue by cue as they are said).
    expect((await (await fetch(files!.vtt_url)).text()).toUpperCase()).toMatch(/^WEBVTT[\s\S]*CAPTION[\s\S]*NUMBER/);
  });

  test("a faces job loads the face model inside the image and finds the face", async () => {
    const submitted = await account.client.submit({ video_url: facesUrl, video_type: "vlog", config_name: "faces" });
    const job: JobView = await account.client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(job.clips?.[0]).toMatchObject({ reframe: "faces", faces_count: 1, width: 720, height: 1280 });
  });

  test("cancel mid-render stops the work in the container", async () => {
    const jobId = await submitAndWaitForRender("long-cancel.mp4", "several");
    const canceled = await account.client.request("POST", `/api/v1/jobs/${jobId}/cancel`);
    expect(canceled.status).toBe(200);
    await pollUntil(async () => ((await engineHealth()).active_jobs === 0 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200, description: "the engine to drop the canceled job" });
    await pollUntil(async () => (!(await processesInContainer()).includes("ffmpeg") ? true : undefined), { timeoutMs: 60_000, intervalMs: 200, description: "ffmpeg to stop" });
    expect(await processesInContainer()).toEqual(["node"]);
    expect((await account.client.getJob(jobId)).status).toBe("canceled");
  });

  test("SIGTERM mid-job: the engine reports interrupted (the job goes back to the queue) and exits 0", async () => {
    const jobId = await submitAndWaitForRender("long-sigterm.mp4", "several");
    await podman(["kill", "--signal", "SIGTERM", containerName]);
    const exitCode = (await podman(["wait", containerName])).trim();
    expect(exitCode).toBe("0");
    const logs = await podmanRun(["logs", containerName]);
    expect(logs.stdout + logs.stderr).toMatch(/"event":"job_interrupted"/);
    expect(logs.stdout + logs.stderr).toMatch(/"event":"engine_stopped"/);
    expect(await processesInContainer()).toEqual([]);
    const job = await pollUntil(async () => {
      const seen = await account.client.getJob(jobId);
      return seen.status === "processing" ? undefined : seen;
    }, { timeoutMs: 60_000, intervalMs: 200, description: `${jobId} to leave processing` });
    expect(job.status).toBe("queued");
    // Nothing will run it here: cancel it so the stack stops clean.
    expect((await account.client.request("POST", `/api/v1/jobs/${jobId}/cancel`)).status).toBe(200);
  });
});

function srt(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2): string => String(n).padStart(width, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor((ms % 3_600_000) / 60_000))}:${pad(Math.floor((ms % 60_000) / 1000))},${pad(ms % 1000, 3)}`;
}
