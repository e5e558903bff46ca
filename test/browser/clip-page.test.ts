/**
 * The clip page in Chromium against the real local stack (Worker under
 * wrangler dev, the engine with the machine's ffmpeg): a job on a narrated
 * source (its script as a subtitle track, so the clip has caption words)
 * completes; from the job card the person opens clip 1's page, nudges the
 * end by +1 s, fixes one caption word, presses Re-render, and the page
 * shows version 2 with the new span and the fixed word once the engine has
 * rendered it. Pages are photographed into test-output/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Page } from "playwright-core";
import { ApiClient } from "../../scripts/local-stack/api-client.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { SCRIPT } from "../../container/test/helpers/script.ts";
import { made } from "../e2e/harness/journey.ts";
import { sharedStack } from "../e2e/harness/shared-stack.ts";
import type { SharedStackInfo } from "../e2e/harness/shared-stack-config.ts";
import { cachedNarration } from "../media/narration.ts";
import { launchBrowser, screenshot, type Browser } from "./harness/browser.ts";

const PASSWORD = "a long clip page password 42";
/** One short centred clip with captions: the edit renders in seconds. */
const CONFIG = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, reframe: "center", captions: "both" } as const;
const JOB_DEADLINE_MS = 150_000;
const EDIT_DEADLINE_MS = 150_000;
const FIXED = "Pelican";

let stack: SharedStackInfo;
let sources: SourceServer;
let talkUrl: string;
let browser: Browser;
let page: Page;
const email = `clip-page-${Date.now()}@example.test`;
let jobId: string | undefined;
let client: ApiClient | undefined;

beforeAll(async () => {
  const [info, server, narration] = await Promise.all([
    sharedStack(),
    startSourceServer(),
    cachedNarration({ sentences: SCRIPT.slice(0, 6), subtitleTrack: true, gapSeconds: 0.9, minDurationSeconds: 24 }),
  ]);
  stack = info;
  sources = server;
  talkUrl = sources.addFile("clip-page-talk.mp4", narration.path);
  browser = await launchBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await sources?.close();
});

describe("the clip page in Chromium", { timeout: 240_000 }, () => {
  test("a person signs up, makes an API key, and a job of theirs completes", async () => {
    await page.goto(`${stack.workerUrl}/dashboard/signup`);
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(/\/dashboard\/login\?signed_up=1/);
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/dashboard\/jobs$/);
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByLabel("Name").fill("clip page");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.locator("#new-key").textContent())?.trim() ?? "";
    expect(key).toMatch(/^ck_live_/);
    const api = new ApiClient(stack.workerUrl, key);
    expect((await api.request("PUT", "/api/v1/configs/edit", { body: CONFIG })).status).toBe(201);
    const submitted = await api.submit({ video_url: talkUrl, video_type: "podcast", config_name: "edit" });
    const job = await api.waitForJob(submitted.job_id, { timeoutMs: JOB_DEADLINE_MS });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    client = api;
    jobId = job.job_id;
  });

  test("nudges the end +1 s, fixes a word, re-renders, and sees version 2", async () => {
    const job = made(jobId, "the completed job");
    const api = made(client, "the account's API client");
    await page.goto(`${stack.workerUrl}/dashboard/jobs`);
    await page.locator(`article[data-job="${job}"] a[data-edit-clip="0"]`).click();
    await page.waitForURL(new RegExp(`/dashboard/jobs/${job}/clips/0$`));
    await expect(page.locator("[data-clip-version]").getAttribute("data-clip-version")).resolves.toBe("1");
    const video = page.locator(".clip-page video");
    const firstSrc = (await video.getAttribute("src")) ?? "";
    expect(firstSrc.startsWith(`${stack.cdnUrl}/`)).toBe(true);
    await screenshot(page, "clip-page-01-version-1");

    const end = page.getByLabel("End (seconds of the source)");
    const oldEnd = Number(await end.inputValue());
    await page.getByRole("button", { name: "End +1 s" }).click();
    await expect(end.inputValue()).resolves.toBe(String(Math.round((oldEnd + 1) * 1000) / 1000));

    const words = page.locator("input[data-word]");
    expect(await words.count()).toBeGreaterThan(3);
    const fixed = words.nth(2);
    expect(await fixed.inputValue()).not.toBe(FIXED);
    await fixed.fill(FIXED);
    await screenshot(page, "clip-page-02-edited");
    await page.getByRole("button", { name: "Re-render" }).click();
    await page.waitForURL(/\?edited=1$/);

    // The page reloads itself while the re-render runs; version 2 appears once it is published.
    await page.locator('[data-clip-version="2"]').waitFor({ timeout: EDIT_DEADLINE_MS });
    await expect(page.locator("[data-edit-status]").count()).resolves.toBe(0);
    await expect(end.inputValue()).resolves.toBe(String(Math.round((oldEnd + 1) * 1000) / 1000));
    await expect(page.locator("input[data-word]").nth(2).inputValue()).resolves.toBe(FIXED);
    const newSrc = (await video.getAttribute("src")) ?? "";
    expect(newSrc).not.toBe(firstSrc);
    const handle = await video.elementHandle();
    await page.waitForFunction((el) => el instanceof HTMLVideoElement && el.readyState >= 1 && el.duration > 0, handle, { timeout: 30_000 });
    const read = await api.request("GET", `/api/v1/jobs/${job}`);
    const clip = (read.body as { clips: { end_seconds: number; text: string | null }[] }).clips[0]!;
    expect(clip.end_seconds).toBeCloseTo(oldEnd + 1, 2);
    expect(clip.text).toContain(FIXED);
    await screenshot(page, "clip-page-03-version-2");
  });
});
