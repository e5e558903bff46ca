/**
 * The MLT export of a real job on the local stack renders with melt to the
 * clip the engine published: a job (9:16, reframe auto, so the crop moves at
 * scene changes; captions off, so the picture is the crop alone) completes;
 * its export is rendered by Debian's `melt` against the same source file;
 * the render has the clip's frames and size, and every tenth frame matches the
 * published clip (ffmpeg's ssim filter, above 0.9).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { newAccount } from "./harness/accounts.ts";
import { download, scratchDir } from "./harness/cdn.ts";
import { TALK_40S, talkSource } from "./harness/media.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import { run, sampledSsim, videoOf } from "../export/video-check.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const JOB_TIMEOUT_MS = 200_000;
const TEST_TIMEOUT = { timeout: 300_000 };
const CONFIG = { aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, reframe: "auto", captions: "off" } as const;

let stack: SharedStackInfo;
let sources: SourceServer;
let talkPath: string;
let talkUrl: string;
const scratch = scratchDir();

beforeAll(async () => {
  const [info, server, talk] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_40S)]);
  stack = info;
  sources = server;
  talkPath = talk.path;
  talkUrl = sources.addFile("export-talk.mp4", talk.path);
});

afterAll(async () => {
  await sources?.close();
  scratch.remove();
});

describe("the MLT export of a completed job", TEST_TIMEOUT, () => {
  test("renders with melt to the published clip", async () => {
    const { client, apiKey } = await newAccount(stack);
    expect((await client.request("PUT", "/api/v1/configs/export", { body: CONFIG })).status).toBe(201);
    const submitted = await client.submit({ video_url: talkUrl, video_type: "podcast", config_name: "export" });
    const job = await client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    const clipUrl = job.clips![0]!.url;
    const clip = await scratch.save("clip.mp4", (await download(clipUrl)).bytes);

    const res = await fetch(`${stack.workerUrl}/api/v1/jobs/${submitted.job_id}/export?format=mlt`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    const mlt = await res.text();
    // The export names the source by its URL; melt reads the same file from disk.
    expect(mlt).toContain(`<property name="resource">${talkUrl}</property>`);
    const project = join(scratch.dir, "cut.mlt");
    await writeFile(project, mlt.replace(`<property name="resource">${talkUrl}</property>`, `<property name="resource">${talkPath}</property>`));
    const rendered = join(scratch.dir, "melt.mp4");
    await run("melt", ["-quiet", project, "-consumer", `avformat:${rendered}`, "vcodec=libx264", "preset=ultrafast", "crf=12", "an=1"]);

    const published = await videoOf(clip);
    const melted = await videoOf(rendered);
    expect({ width: melted.width, height: melted.height }).toEqual({ width: published.width, height: published.height });
    expect(Math.abs(melted.frames - published.frames)).toBeLessThanOrEqual(1);

    const ssim = await sampledSsim(rendered, clip);
    expect(ssim.length).toBeGreaterThan(0);
    console.log(`SSIM melt vs published clip (every tenth frame): ${ssim.map((v) => v.toFixed(3)).join(" ")}`);
    for (const value of ssim) expect(value).toBeGreaterThan(0.9);
  });
});
