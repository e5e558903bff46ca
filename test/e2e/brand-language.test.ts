/**
 * Brand and language on the real local stack, through HTTP only:
 * the logo uploaded with the typed client, a configuration that places it
 * and asks for French captions, and a job with an English captions file.
 *
 * The local stack has no Workers AI, so translation is unavailable: the job
 * completes with its captions in the spoken language and its step says so.
 * The step is live text, so the test reads it while the clip's upload is held
 * at the upload gate (the job cannot move past rendering and uploading), then
 * lets the upload go on.
 * The logo travels for real: private bucket -> the engine channel's logo
 * route (job token) -> the engine's one encode; it is found in the clip at
 * its place by template match.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ClipjobsClient } from "../../client/src/index.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { matchTemplate, rgbFrameAt, rgbImage } from "../../container/test/helpers/pixels.ts";
import { runProcess } from "../../container/src/shared/spawn.ts";
import { newAccount } from "./harness/accounts.ts";
import { download, scratchDir } from "./harness/cdn.ts";
import { TALK_40S, talkSource } from "./harness/media.ts";
import { clipUploadHeld, holdClipUpload, releaseClipUpload, sharedStack } from "./harness/shared-stack.ts";
import { pollUntil } from "../../scripts/local-stack/poll.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const JOB_TIMEOUT_MS = 200_000;
const TEST_TIMEOUT = { timeout: 300_000 };
const SENTENCES = [
  "Welcome to the weekly show.",
  "Today we talk about short clips.",
  "Every clip needs a clear idea.",
  "Captions help people follow along.",
  "A logo tells them who made it.",
  "Thanks for watching this week.",
];

let stack: SharedStackInfo;
let sources: SourceServer;
let talkPath: string;
let captionsUrl: string;
let logoPath: string;
const scratch = scratchDir();

function srtStamp(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor((ms % 3_600_000) / 60_000))}:${pad(Math.floor((ms % 60_000) / 1000))},${pad(ms % 1000, 3)}`;
}

beforeAll(async () => {
  const [info, server, talk] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_40S)]);
  stack = info;
  sources = server;
  talkPath = talk.path;
  // One English sentence over each of the talk's first phrases.
  const cues = talk.facts.phrases.slice(0, SENTENCES.length).map((p, i) => `${i + 1}\n${srtStamp(p.start)} --> ${srtStamp(p.end)}\n${SENTENCES[i]}\n`);
  captionsUrl = sources.addText("brand-talk.srt", cues.join("\n"), "application/x-subrip");
  logoPath = join(scratch.dir, "logo.png");
  const made = await runProcess({ command: "ffmpeg", args: ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=120x60:r=1", "-frames:v", "1", logoPath], timeoutMs: 30_000 });
  expect(made.exitCode, made.stderrTail).toBe(0);
});

afterAll(async () => {
  await sources?.close();
  scratch.remove();
});

describe("a branded job asking for captions in another language, without Workers AI", TEST_TIMEOUT, () => {
  test("completes in the spoken language, says so in its step, and draws the logo", async () => {
    const account = await newAccount(stack);
    const typed = new ClipjobsClient({ baseUrl: stack.workerUrl, apiKey: account.apiKey });
    const logo = await typed.putLogo(new Uint8Array(await readFile(logoPath)), "image/png");
    expect(logo).toMatchObject({ content_type: "image/png", width: 120, height: 60 });

    const config = {
      aspect_ratio: "16:9",
      resolution: 720,
      min_clip_seconds: 5,
      max_clip_seconds: 12,
      max_clips: 1,
      captions: "both",
      caption_color: "#FFE000",
      logo_position: "top-right",
      logo_size: 20,
      hook_title_seconds: 2,
      caption_language: "fr",
    } as const;
    expect((await typed.putConfig("branded", config)).caption_language).toBe("fr");

    // The source is held until the clip's upload is armed at the gate, so the engine cannot get there first.
    const source = sources.addHeldFile("brand-talk.mp4", talkPath, 64 * 1024);
    const submitted = await account.client.request("POST", "/api/v1/jobs", {
      body: { video_url: source.url, video_type: "podcast", config_name: "branded", captions_url: captionsUrl, language: "en" },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const jobId = (submitted.body as { job_id: string }).job_id;
    await holdClipUpload(jobId, 0);
    source.release();
    await clipUploadHeld(jobId, 0);
    // The clip is rendered and its upload held: the step (rendering, then uploading) says the captions stay in English.
    const steps: string[] = [];
    await pollUntil(
      async () => {
        const step = (await account.client.getJob(jobId)).step;
        if (step && steps.at(-1) !== step) steps.push(step);
        if (!step?.includes("captions stay in English: no translation here")) throw new Error(`steps seen: ${steps.join(" | ")}`);
        return true;
      },
      { timeoutMs: JOB_TIMEOUT_MS, intervalMs: 250, description: `the step of ${jobId} to say the captions stay in English` },
    );
    await releaseClipUpload(jobId, 0);
    const job = await account.client.waitForJob(jobId, { timeoutMs: JOB_TIMEOUT_MS, intervalMs: 500 });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(job).toMatchObject({
      language_hint: "en",
      caption_language: "fr",
      translation: { language: "fr", status: "unavailable" },
    });
    expect(JSON.stringify(job["translation"])).toContain("not available");

    const clip = job.clips![0]!;
    expect(clip.text).toBeTruthy();
    const english = SENTENCES.join(" ");
    for (const word of String(clip.text).split(" ")) expect(english).toContain(word);

    // The logo, read by the engine over the job channel, is in the clip at the top right.
    const saved = await scratch.save("branded.mp4", (await download(clip.url)).bytes);
    const width = 1280;
    const height = 720;
    const placed = { width: 256, height: 128, x: width - 256 - 29, y: 29 };
    const frame = await rgbFrameAt(saved, 3, width, height);
    const template = await rgbImage(logoPath, placed.width, placed.height);
    const found = matchTemplate(frame, template, placed, 8);
    expect(found.score).toBeGreaterThan(0.85);
    expect(Math.abs(found.x - placed.x)).toBeLessThanOrEqual(1);
    expect(Math.abs(found.y - placed.y)).toBeLessThanOrEqual(1);
  });
});
