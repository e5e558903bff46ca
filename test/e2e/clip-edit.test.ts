/**
 * Editing on the local stack over HTTP (the Worker under wrangler dev, the
 * engine with the machine's ffmpeg): a job on a narrated source completes;
 * its first clip is extended by 4 s at its end and one caption word is
 * corrected; the new version's length matches the new span (ffprobe, within
 * a frame), its WebVTT sidecar and its burned captions (tesseract) carry the
 * new word, the old version's URL answers 404 once the new one is published,
 * and the account paid the edit's documented credits. Then a new clip cut
 * from a span of the source renders with captions. The job analyses the
 * first 22 s only (time_range), so the source goes on after its clip.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SCRIPT } from "../../container/test/helpers/script.ts";
import type { ApiClient } from "../../scripts/local-stack/api-client.ts";
import { pollUntil } from "../../scripts/local-stack/poll.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { cachedNarration } from "../media/narration.ts";
import { newAccount } from "./harness/accounts.ts";
import { download, scratchDir, statusOf } from "./harness/cdn.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const run = promisify(execFile);
/** Short square clips with burned captions and sidecars, cut only from the first 22 s so there is source after them. */
const CONFIG = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 30, max_clips: 1, reframe: "center", captions: "both" } as const;
// Ceilings, not expectations: on a machine loaded by other work a render takes several times its quiet length.
const JOB_DEADLINE_MS = 300_000;
const EDIT_DEADLINE_MS = 300_000;
const FIXED = "Pelican";

interface ClipWord {
  index: number;
  text: string;
  start_seconds: number;
  end_seconds: number;
}
interface ClipAnswer {
  index: number;
  version: number;
  url: string | null;
  start_seconds: number;
  end_seconds: number;
  captions: { vtt_url: string; srt_url: string } | null;
  captions_burned: boolean;
  edit: { status: string; error?: { code: string; message: string } } | null;
  words: ClipWord[];
}

let stack: SharedStackInfo;
let sources: SourceServer;
let talkUrl: string;
const scratch = scratchDir();

beforeAll(async () => {
  const [info, server, narration] = await Promise.all([
    sharedStack(),
    startSourceServer(),
    cachedNarration({ sentences: [...SCRIPT], subtitleTrack: true, gapSeconds: 0.9, minDurationSeconds: 48 }),
  ]);
  stack = info;
  sources = server;
  talkUrl = sources.addFile("clip-edit-talk.mp4", narration.path);
});

afterAll(async () => {
  await sources?.close();
  scratch.remove();
});

async function readClip(client: ApiClient, jobId: string, index: number): Promise<ClipAnswer> {
  const read = await client.request("GET", `/api/v1/jobs/${jobId}/clips/${index}`);
  expect(read.status, JSON.stringify(read.body)).toBe(200);
  return read.body as ClipAnswer;
}

/** The clip once the version after `version` is published; a failed edit fails the test with its error. */
async function published(client: ApiClient, jobId: string, index: number, version: number): Promise<ClipAnswer> {
  return pollUntil(
    async () => {
      const clip = await readClip(client, jobId, index);
      if (clip.edit?.status === "failed") throw new Error(`the edit failed: ${JSON.stringify(clip.edit.error)}`);
      return clip.version > version && clip.edit === null ? clip : undefined;
    },
    { timeoutMs: EDIT_DEADLINE_MS, intervalMs: 500, description: `clip ${index} of ${jobId} to publish version ${version + 1}` },
  );
}

async function videoStream(file: string): Promise<{ duration: number; frame: number }> {
  const { stdout } = await run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=duration,r_frame_rate", "-of", "json", file]);
  const stream = (JSON.parse(stdout) as { streams: { duration: string; r_frame_rate: string }[] }).streams[0]!;
  const [num, den] = stream.r_frame_rate.split("/").map(Number);
  return { duration: Number(stream.duration), frame: den! / num! };
}

/** The words tesseract reads in the bottom third of the clip's picture at `at` seconds (where bottom captions sit). */
async function ocrCaptionBand(clip: string, at: number): Promise<string[]> {
  const png = join(scratch.dir, `band-${at.toFixed(2)}.png`);
  await run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-ss", at.toFixed(3), "-i", clip, "-frames:v", "1", "-vf", "crop=iw:ih/3:0:ih*2/3,format=gray,negate", png]);
  const { stdout } = await run("tesseract", [png, "stdout", "--psm", "6", "-l", "eng"]);
  return stdout
    .split(/\s+/)
    .map((word) => word.toLowerCase().replace(/[^a-z]/g, ""))
    .filter((word) => word !== "");
}

async function creditsRemaining(client: ApiClient): Promise<number> {
  const usage = await client.request("GET", "/api/v1/usage");
  expect(usage.status).toBe(200);
  return (usage.body as { credits_remaining: number }).credits_remaining;
}

describe("editing a completed job's clips on the local stack", { timeout: 960_000 }, () => {
  test("extend a clip by 4 s and fix a word, then cut a new clip", async () => {
    const { client } = await newAccount(stack);
    expect((await client.request("PUT", "/api/v1/configs/edit", { body: CONFIG })).status).toBe(201);
    const body = { video_url: talkUrl, video_type: "podcast", config_name: "edit", time_range: { start_seconds: 0, end_seconds: 22 } };
    const submitted = await client.request("POST", "/api/v1/jobs", { body });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const job = await client.waitForJob((submitted.body as { job_id: string }).job_id, { timeoutMs: JOB_DEADLINE_MS });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");

    const before = await readClip(client, job.job_id, 0);
    expect(before.version).toBe(1);
    const oldUrl = before.url!;
    expect(await statusOf(oldUrl)).toBe(200);
    // A word inside the clip, not its first, long enough for OCR to tell it from its neighbours.
    const word = before.words.find((w, i) => i > 0 && w.text.replace(/[^A-Za-z]/g, "").length >= 5);
    expect(word, JSON.stringify(before.words.map((w) => w.text))).toBeDefined();
    const credits = await creditsRemaining(client);

    const newEnd = Math.round((before.end_seconds + 4) * 1000) / 1000;
    const patched = await client.request("PATCH", `/api/v1/jobs/${job.job_id}/clips/0`, {
      body: { end_seconds: newEnd, words: [{ index: word!.index, text: FIXED }] },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(202);
    expect((patched.body as ClipAnswer).edit?.status).toMatch(/^(queued|rendering)$/);

    const after = await published(client, job.job_id, 0, 1);
    expect(after.version).toBe(2);
    expect(after.start_seconds).toBeCloseTo(before.start_seconds, 3);
    expect(after.end_seconds).toBeCloseTo(newEnd, 3);
    expect(after.url).not.toBe(oldUrl);
    expect(after.words.find((w) => w.index === word!.index)?.text).toBe(FIXED);

    // The new version: its length is the new span, within a frame.
    const clipPath = await scratch.save("edited.mp4", (await download(after.url!)).bytes);
    const stream = await videoStream(clipPath);
    expect(Math.abs(stream.duration - (newEnd - before.start_seconds))).toBeLessThanOrEqual(stream.frame + 1e-3);
    // Its sidecar and its burned captions carry the corrected word.
    const vtt = new TextDecoder().decode((await download(after.captions!.vtt_url)).bytes);
    expect(vtt).toContain(FIXED);
    const at = (word!.start_seconds + word!.end_seconds) / 2 - before.start_seconds;
    const read = await ocrCaptionBand(clipPath, at);
    console.log(`OCR at ${at.toFixed(2)} s of the edited clip: ${read.join(" ")}`);
    expect(read).toContain(FIXED.toLowerCase());
    // The previous version is gone (the local CDN serves R2 without a cache).
    expect(await statusOf(oldUrl)).toBe(404);
    // One credit per started minute of the new clip's length.
    expect(await creditsRemaining(client)).toBe(credits - Math.ceil((newEnd - before.start_seconds) / 60));

    // A new clip cut from a span of the job's transcribed range, rendered like the others.
    const added = await client.request("POST", `/api/v1/jobs/${job.job_id}/clips`, { body: { start_seconds: 13, end_seconds: 21 } });
    expect(added.status, JSON.stringify(added.body)).toBe(202);
    expect((added.body as ClipAnswer).index).toBe(1);
    const cut = await published(client, job.job_id, 1, 0);
    expect(cut.version).toBe(1);
    expect(cut.captions_burned).toBe(true);
    expect(cut.words.length).toBeGreaterThan(3);
    const cutPath = await scratch.save("cut.mp4", (await download(cut.url!)).bytes);
    expect(Math.abs((await videoStream(cutPath)).duration - 8)).toBeLessThanOrEqual(0.1);
    const cutVtt = new TextDecoder().decode((await download(cut.captions!.vtt_url)).bytes);
    expect(cutVtt).toContain(cut.words[1]!.text);
    const listed = await client.request("GET", `/api/v1/jobs/${job.job_id}`);
    expect((listed.body as { clips: unknown[] }).clips).toHaveLength(2);
  });
});
