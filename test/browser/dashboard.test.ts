/**
 * The dashboard in a real browser against the real local stack (Worker under
 * wrangler dev, engine with the machine's ffmpeg): one visitor's whole
 * journey, in order, in one signed-in page. Each page is photographed into
 * test-output/screenshots/. A step that needs what an earlier step made
 * (the job) asks for it with `made()`, which fails loudly when that step did
 * not run or failed, rather than going on with an empty value.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Page } from "playwright-core";
import { statSync } from "node:fs";
import { startSourceServer, type HeldFile, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { made } from "../e2e/harness/journey.ts";
import { talkSource } from "../e2e/harness/media.ts";
import { sharedStack } from "../e2e/harness/shared-stack.ts";
import type { SharedStackInfo } from "../e2e/harness/shared-stack-config.ts";
import type { MediaSpec } from "../media/generate.ts";
import { launchBrowser, screenshot, type Browser } from "./harness/browser.ts";

/** Short and small, so the job finishes in seconds. */
const TALK_30S: MediaSpec = { durationSeconds: 30, width: 640, height: 360, fps: 15, bursts: [8, 20], sceneChanges: [11, 22], seed: 31 };
/** Square 720p, one short clip: the cheapest job that still exercises the whole path. */
const QUICK = { name: "quick", aspect_ratio: "1:1", resolution: "720", min_clip_seconds: "5", max_clip_seconds: "10", max_clips: "1", reframe: "center" };
const PASSWORD = "a long browser password 42";
const JOB_DEADLINE_MS = 150_000;
const PHONE = { width: 390, height: 844 };

let stack: SharedStackInfo;
let sources: SourceServer;
/** The job's source, held half-way until the page has shown progress (see the live-progress test). */
let heldSource: HeldFile;
let browser: Browser;
let page: Page;
const email = `browser-${Date.now()}@example.test`;
/** What the job step made, for the usage and log-out steps. */
let jobId: string | undefined;

function apiGet(path: string, key: string): Promise<Response> {
  return fetch(`${stack.workerUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } });
}

async function phoneScreenshot(path: string, name: string): Promise<void> {
  const phone = await browser.context.newPage();
  await phone.setViewportSize(PHONE);
  await phone.goto(`${stack.workerUrl}${path}`);
  await screenshot(phone, name);
  // Nothing is wider than the phone's screen.
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${path} scrolls sideways on a phone`).toBeLessThanOrEqual(0);
  await phone.close();
}

beforeAll(async () => {
  const [info, server, talk] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_30S)]);
  stack = info;
  sources = server;
  heldSource = sources.addHeldFile("browser-test-talk-held.mp4", talk.path, Math.floor(statSync(talk.path).size / 2));
  browser = await launchBrowser();
  page = browser.page;
  await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.workerUrl });
});

afterAll(async () => {
  await browser?.close();
  await sources?.close();
});

describe("the dashboard in Chromium", { timeout: 200_000 }, () => {
  test("the bare origin leads to the sign-in page; sign up creates a free account, then the person signs in", async () => {
    await page.goto(`${stack.workerUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Log in");
    await screenshot(page, "01-login");

    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await screenshot(page, "02-signup");
    await page.getByRole("button", { name: "Create account" }).click();
    // The same answer whether or not the address had an account: the sign-in page with a notice.
    await page.waitForURL(/\/dashboard\/login\?signed_up=1/);
    await expect(page.getByRole("status").textContent()).resolves.toContain("log in with the password you chose");
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/dashboard\/jobs$/);
    await expect(page.locator(".who").textContent()).resolves.toBe(email);
    await screenshot(page, "03-jobs-empty");
  });

  test("creates an API key shown once with a copy button; the key works against the API", async () => {
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByLabel("Name").fill("browser test");
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = (await page.locator("#new-key").textContent()) ?? "";
    expect(secret).toMatch(/^ck_live_[0-9A-Za-z]{40,}$/);
    await expect(page.getByText("it will not be shown again").count()).resolves.toBe(1);
    await page.getByRole("button", { name: "Copy key" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await screenshot(page, "04-keys-created");

    const usage = await apiGet("/api/v1/usage", secret);
    expect(usage.status).toBe(200);
    expect(await usage.json()).toMatchObject({ plan: "free", credits_total: 60, credits_remaining: 60 });

    // The list never shows the key again: prefix and last four only.
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    const row = page.locator("tr", { hasText: "browser test" });
    await expect(row.textContent()).resolves.toContain(`${secret.slice(0, 12)}…${secret.slice(-4)}`);
    expect(await page.content()).not.toContain(secret);
  });

  test("revoking the key (after confirming) makes the next API request 401", async () => {
    // A key of its own, seen working before it is revoked.
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByLabel("Name").fill("revoke me");
    await page.getByRole("button", { name: "Create key" }).click();
    const apiKey = (await page.locator("#new-key").textContent()) ?? "";
    expect(apiKey).toMatch(/^ck_live_[0-9A-Za-z]{40,}$/);
    expect((await apiGet("/api/v1/usage", apiKey)).status).toBe(200);

    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByRole("link", { name: "Revoke key revoke me" }).click();
    await page.waitForURL(/\/revoke$/);
    await screenshot(page, "05-keys-revoke-confirm");
    await page.getByRole("button", { name: "Revoke key" }).click();
    await page.getByText("is revoked").waitFor();
    await screenshot(page, "06-keys-revoked");
    const refused = await apiGet("/api/v1/usage", apiKey);
    expect(refused.status).toBe(401);
    expect((await refused.json()) as Record<string, unknown>).toMatchObject({ code: "unauthorized" });
  });

  test("creates a configuration, with the schema's errors shown for bad values", async () => {
    await page.getByRole("link", { name: "Configurations", exact: true }).click();
    const form = page.locator("form", { has: page.getByRole("button", { name: "Create configuration" }) });
    // Defaults are shown.
    await expect(form.getByLabel("Shortest clip (seconds)").inputValue()).resolves.toBe("15");
    await form.getByLabel("Name").fill(QUICK.name);
    await form.getByLabel("Shortest clip (seconds)").fill("30");
    await form.getByLabel("Longest clip (seconds)").fill("20");
    await form.getByRole("button", { name: "Create configuration" }).click();
    await page.getByText("max_clip_seconds must be at least min_clip_seconds").waitFor();
    await screenshot(page, "07-configs-invalid");

    const retry = page.locator("form", { has: page.getByRole("button", { name: "Create configuration" }) });
    await retry.getByLabel("Aspect ratio").selectOption(QUICK.aspect_ratio);
    await retry.getByLabel("Resolution").selectOption(QUICK.resolution);
    await retry.getByLabel("Shortest clip (seconds)").fill(QUICK.min_clip_seconds);
    await retry.getByLabel("Longest clip (seconds)").fill(QUICK.max_clip_seconds);
    await retry.getByLabel("Clips at most").fill(QUICK.max_clips);
    await retry.locator("#config-reframe").selectOption(QUICK.reframe);
    await retry.getByRole("button", { name: "Create configuration" }).click();
    await page.getByText(`Configuration “${QUICK.name}” saved.`).waitFor();
    await expect(page.locator(`tr[data-config="${QUICK.name}"]`).textContent()).resolves.toContain("1:1, 720p, 5-10 s, up to 1 clip");
    await screenshot(page, "08-configs");
  });

  test("submits a job with it and watches it complete live, without a reload; the clip plays", async () => {
    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    await page.getByLabel("Video URL").fill(heldSource.url);
    await page.getByLabel("Video type").selectOption("vlog");
    await page.getByLabel("Configuration").selectOption(QUICK.name);
    await page.getByRole("button", { name: "Submit video" }).click();
    await page.waitForURL(/queued=job_/);
    const queued = new URL(page.url()).searchParams.get("queued") ?? "";
    const card = page.locator(`article[data-job="${queued}"]`);
    await expect(card.locator("progress").count()).resolves.toBe(1);

    // A marker that a reload would wipe, and a record of every progress value the bar shows.
    await page.evaluate(() => {
      const w = window as unknown as { notReloaded: boolean; progressSeen: number[] };
      w.notReloaded = true;
      w.progressSeen = [];
      const bar = document.querySelector("article[data-live-job] progress") as HTMLProgressElement;
      new MutationObserver(() => w.progressSeen.push(bar.value)).observe(bar, { attributes: true, childList: true, subtree: true, characterData: true });
      setInterval(() => w.progressSeen.push(bar.value), 250);
    });
    // The page polls once a second and a short job can run start to end between two polls: its source stays
    // held half-way (the engine downloading, progress above 0) until the bar has shown that progress.
    await page.waitForFunction(() => (window as unknown as { progressSeen: number[] }).progressSeen.some((value) => value > 0), undefined, { timeout: 60_000 });
    await screenshot(page, "09-jobs-processing");
    heldSource.release();

    await page.locator(`article[data-job="${queued}"] .status-completed`).waitFor({ timeout: JOB_DEADLINE_MS });
    const state = await page.evaluate(() => {
      const w = window as unknown as { notReloaded?: boolean; progressSeen?: number[] };
      return { notReloaded: w.notReloaded, progressSeen: w.progressSeen };
    });
    expect(state.notReloaded).toBe(true);
    // The bar moved while the page stayed put.
    expect(Math.max(...(state.progressSeen ?? [0]))).toBeGreaterThan(0);
    expect(new URL(page.url()).searchParams.get("queued")).toBe(queued);

    const video = page.locator(`article[data-job="${queued}"] video`);
    await expect(video.count()).resolves.toBe(1);
    const src = (await video.getAttribute("src")) ?? "";
    expect(src.startsWith(`${stack.cdnUrl}/`)).toBe(true);
    const poster = (await video.getAttribute("poster")) ?? "";
    expect(poster.startsWith(`${stack.cdnUrl}/`)).toBe(true);
    const handle = await video.elementHandle();
    await page.waitForFunction((el) => el instanceof HTMLVideoElement && el.readyState >= 1 && el.duration > 0, handle, { timeout: 30_000 });
    const duration = await video.evaluate((el) => (el as HTMLVideoElement).duration);
    expect(duration).toBeGreaterThanOrEqual(5 - 0.4);
    expect(duration).toBeLessThanOrEqual(10 + 0.4);
    // It plays: time moves forward.
    await video.evaluate((el) => {
      const v = el as HTMLVideoElement;
      v.muted = true;
      return v.play();
    });
    await page.waitForFunction((el) => el instanceof HTMLVideoElement && el.currentTime > 0.2, handle, { timeout: 30_000 });
    expect(await video.evaluate((el) => [(el as HTMLVideoElement).videoWidth, (el as HTMLVideoElement).videoHeight])).toEqual([720, 720]);

    const download = page.locator(`article[data-job="${queued}"] a[download][href$=".mp4"]`);
    await expect(download.getAttribute("href")).resolves.toBe(src);
    await expect(page.locator(`article[data-job="${queued}"]`).textContent()).resolves.toMatch(/score \d\.\d\d/);
    await video.evaluate((el) => (el as HTMLVideoElement).pause());
    await page.reload();
    await screenshot(page, "10-jobs-completed");
    await phoneScreenshot("/dashboard/jobs", "11-jobs-completed-phone");
    // Completed and shown: the usage and log-out steps read this job.
    jobId = queued;
  });

  test("usage shows credits remaining of total, the plan and the job's credits", async () => {
    const job = made(jobId, "the completed job");
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    const remaining = await page.locator("[data-credits]").textContent();
    expect(remaining).toBe("59 of 60 credits remaining");
    await expect(page.locator("[data-plan]").textContent()).resolves.toBe("free");
    await expect(page.locator(`tr[data-job="${job}"] [data-credits-used]`).textContent()).resolves.toBe("1");
    await screenshot(page, "12-usage");
    await phoneScreenshot("/dashboard/keys", "13-keys-phone");
    await phoneScreenshot("/dashboard/configs", "14-configs-phone");
  });

  test("the keyboard reaches the skip link first and every control has a name", async () => {
    await page.goto(`${stack.workerUrl}/dashboard/configs`);
    await page.keyboard.press("Tab");
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe("Skip to content");
    const unnamed = await page.evaluate(() =>
      Array.from(document.querySelectorAll("input:not([type=hidden]), select, button"))
        .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.textContent?.trim() && !el.getAttribute("aria-label"))
        .map((el) => el.outerHTML),
    );
    expect(unnamed).toEqual([]);
    const headings = await page.evaluate(() => document.querySelectorAll("h1").length);
    expect(headings).toBe(1);
  });

  test("log out: every page refuses and sends the visitor to the sign-in page", async () => {
    const job = made(jobId, "the completed job");
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(/\/dashboard\/login$/);
    for (const path of ["/dashboard/jobs", "/dashboard/keys", "/dashboard/configs", "/dashboard/usage"]) {
      await page.goto(`${stack.workerUrl}${path}`);
      const url = new URL(page.url());
      expect(url.pathname, path).toBe("/dashboard/login");
      expect(url.searchParams.get("next")).toBe(path);
    }
    const status = await page.request.get(`${stack.workerUrl}/dashboard/jobs/${job}/status.json`);
    expect(status.status()).toBe(401);
    await screenshot(page, "15-logged-out");
  });
});
