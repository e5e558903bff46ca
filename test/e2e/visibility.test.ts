/**
 * Tenant boundaries on the real local stack: a client polling
 * {cdn_url} while its job runs finds nothing of the job under any key the
 * API or the old scheme (objects named by the job id) could reveal; a cancel
 * after two rendered clips leaves nothing and charges nothing; completion
 * publishes under keys of their own; the transcript is served by the API
 * only; deleting the job takes its published URLs down.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { JobView } from "../../scripts/local-stack/api-client.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { newAccount } from "./harness/accounts.ts";
import { statusOf } from "./harness/cdn.ts";
import { TALK_20S, TALK_75S, talkSource } from "./harness/media.ts";
import { clipUploadHeld, holdClipUpload, sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const JOB_TIMEOUT_MS = 200_000;
const TEST_TIMEOUT = { timeout: 300_000 };
/** Four short 720p clips: a job that spends a while rendering, one clip at a time. */
const SEVERAL = { aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 4 } as const;
const ONE = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 } as const;

let stack: SharedStackInfo;
let sources: SourceServer;
let longPath: string;
let shortUrl: string;
let captionsUrl: string;

/** WebVTT cues over the whole source: the job's transcript (captions_url) and its clips' sidecars. */
function captionsFor(seconds: number): string {
  const cues = [];
  for (let start = 0; start + 2 < seconds; start += 3) {
    const stamp = (s: number) => `00:${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}.000`;
    cues.push(`${stamp(start)} --> ${stamp(start + 2)}\nThis is sentence number ${start / 3 + 1} of the talk.`);
  }
  return `WEBVTT\n\n${cues.join("\n\n")}\n`;
}

beforeAll(async () => {
  const [info, server, long, short] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_75S), talkSource(TALK_20S)]);
  stack = info;
  sources = server;
  longPath = long.path;
  shortUrl = sources.addFile("short-talk.mp4", short.path);
  captionsUrl = sources.addText("talk.vtt", captionsFor(75), "text/vtt");
});

afterAll(async () => {
  await sources?.close();
});

/** Every key of the job the old scheme, the staging layout or its id could name. */
function guessableUrls(jobId: string, clips: number): string[] {
  const perClip = Array.from({ length: clips }, (_, n) =>
    ["mp4", "jpg", "vtt", "srt"].flatMap((ext) => [`clips/${jobId}/${n}.${ext}`, `staging/${jobId}/${n}.${ext}`]),
  ).flat();
  return [...perClip, `transcripts/${jobId}.json`].map((key) => `${stack.cdnUrl}/${key}`);
}

/** An attacker polling the CDN while the job runs: every answer that was not a 404. */
function pollCdn(urls: readonly string[]): { stop: () => Promise<string[]>; rounds: () => number } {
  let stopped = false;
  let rounds = 0;
  const found: string[] = [];
  const loop = (async () => {
    while (!stopped) {
      const statuses = await Promise.all(urls.map((url) => statusOf(url)));
      statuses.forEach((status, i) => status !== 404 && found.push(`${status} ${urls[i]}`));
      rounds += 1;
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return found;
    },
    rounds: () => rounds,
  };
}

describe("tenant boundaries on {cdn_url}", TEST_TIMEOUT, () => {
  test("nothing of a running job is on the CDN; a cancel after two rendered clips leaves nothing and charges nothing", async () => {
    const { client } = await newAccount(stack);
    expect((await client.request("PUT", "/api/v1/configs/several", { body: SEVERAL })).status).toBeLessThan(300);
    const before = await client.usage();
    // The source is held until the upload gate holds the second clip's upload: once it does, two clips
    // are rendered (the first handed over), and the job cannot complete before the cancel.
    const source = sources.addHeldFile("long-talk-held.mp4", longPath, 64 * 1024);
    const submitted = await client.submit({ video_url: source.url, video_type: "podcast", config_name: "several" });
    await holdClipUpload(submitted.job_id, 1);
    source.release();
    const attacker = pollCdn(guessableUrls(submitted.job_id, SEVERAL.max_clips));
    let held = false;
    const secondClipHeld = clipUploadHeld(submitted.job_id, 1).then(() => (held = true));
    const states: JobView[] = [];
    const rendering = await client.waitForJob(submitted.job_id, {
      timeoutMs: JOB_TIMEOUT_MS,
      intervalMs: 250,
      until: (job) => {
        states.push(job);
        return held || (job.status !== "queued" && job.status !== "processing");
      },
    });
    expect(rendering.status, JSON.stringify(rendering)).toBe("processing");
    await secondClipHeld;
    // The API reveals no object of a processing job.
    for (const state of states) expect(JSON.stringify(state)).not.toMatch(/\/cdn\//);

    const canceled = await client.request("POST", `/api/v1/jobs/${submitted.job_id}/cancel`);
    expect(canceled.status).toBe(200);
    const found = await attacker.stop();
    expect(attacker.rounds()).toBeGreaterThan(0);
    expect(found).toEqual([]);
    const job = await client.getJob(submitted.job_id);
    expect(job.status).toBe("canceled");
    expect(job.credits_charged ?? 0).toBe(0);
    expect((await client.usage()).credits_remaining).toBe(before.credits_remaining);
    for (const url of guessableUrls(submitted.job_id, SEVERAL.max_clips)) expect(await statusOf(url), url).toBe(404);
  });

  test("completion publishes under keys of their own; the transcript is API-only; delete takes the URLs down", async () => {
    const { client } = await newAccount(stack);
    expect((await client.request("PUT", "/api/v1/configs/one", { body: ONE })).status).toBeLessThan(300);
    const submitted = await client.submit({ video_url: shortUrl, video_type: "vlog", config_name: "one", captions_url: captionsUrl });
    const attacker = pollCdn(guessableUrls(submitted.job_id, ONE.max_clips));
    const job = await client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS, intervalMs: 250 });
    expect(await attacker.stop()).toEqual([]);
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    const view = job as JobView & {
      clips: { url: string; thumbnail_url: string; captions: { vtt_url: string; srt_url: string } | null }[];
      transcript: { source: string } | null;
    };
    expect(view.transcript?.source).toBe("captions_url");
    const clip = view.clips[0]!;
    expect(clip.captions).not.toBeNull();
    const urls = [clip.url, clip.thumbnail_url, clip.captions!.vtt_url, clip.captions!.srt_url];
    for (const url of urls) {
      expect(url).toMatch(new RegExp(`^${stack.cdnUrl}/c/[0-9A-Za-z]{22}/(clip\\.mp4|thumbnail\\.jpg|captions\\.vtt|captions\\.srt)$`));
      expect(url).not.toContain(submitted.job_id);
      expect(await statusOf(url), url).toBe(200);
    }
    expect(new Set(urls.map((url) => url.split("/").at(-2))).size).toBe(urls.length);
    // The transcript: 404 on the CDN, 200 through the API.
    expect(await statusOf(`${stack.cdnUrl}/transcripts/${submitted.job_id}.json`)).toBe(404);
    const transcript = await client.request("GET", `/api/v1/jobs/${submitted.job_id}/transcript`);
    expect(transcript.status).toBe(200);
    for (const url of guessableUrls(submitted.job_id, ONE.max_clips)) expect(await statusOf(url), url).toBe(404);

    expect((await client.request("DELETE", `/api/v1/jobs/${submitted.job_id}`)).status).toBe(204);
    for (const url of urls) expect(await statusOf(url), url).toBe(404);
    // The local stack runs the sweep on demand (wrangler dev --test-scheduled): the cron handler is wired.
    expect(await statusOf(`${stack.workerUrl}/__scheduled?cron=*+*+*+*+*`)).toBe(200);
  });
});
