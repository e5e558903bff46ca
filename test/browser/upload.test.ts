/**
 * The dashboard's drag-and-drop upload in Chromium on the real local stack:
 * a video file dropped on the jobs page is sent over tus (the page's own
 * script, with the session), the progress bar reaches 100 %, and the job
 * submitted from it completes, titled with the file's name.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Page } from "playwright-core";
import { TALK_20S, talkSource } from "../e2e/harness/media.ts";
import { sharedStack } from "../e2e/harness/shared-stack.ts";
import type { SharedStackInfo } from "../e2e/harness/shared-stack-config.ts";
import { launchBrowser, screenshot, type Browser } from "./harness/browser.ts";

const JOB_DEADLINE_MS = 150_000;
const FILE_NAME = "Team standup, Monday.mp4";

let stack: SharedStackInfo;
let browser: Browser;
let page: Page;
let videoBase64 = "";

beforeAll(async () => {
  const [info, talk] = await Promise.all([sharedStack(), talkSource(TALK_20S)]);
  stack = info;
  videoBase64 = readFileSync(talk.path).toString("base64");
  browser = await launchBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
});

describe("dashboard upload in Chromium", { timeout: 220_000 }, () => {
  test("a dropped file uploads with a progress bar, then the job from it completes", async () => {
    await page.goto(`${stack.workerUrl}/dashboard/signup`);
    const email = `browser-upload-${Date.now()}@example.test`;
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill("a long browser password 43");
    await page.getByRole("button", { name: "Create account" }).click();
    // Sign-up answers the same whether or not the address is taken: then the person signs in.
    await page.waitForURL(/\/dashboard\/login\?signed_up=1/);
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill("a long browser password 43");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/dashboard\/jobs$/);

    const zone = page.locator("[data-upload-zone]");
    await expect(zone.isVisible()).resolves.toBe(true);
    // Record every value the upload's progress bar shows.
    await page.evaluate(() => {
      const w = window as unknown as { uploadProgress: number[] };
      w.uploadProgress = [];
      const bar = document.querySelector("[data-upload-zone] progress") as HTMLProgressElement;
      new MutationObserver(() => w.uploadProgress.push(bar.value)).observe(bar, { attributes: true, childList: true, subtree: true });
    });

    // A real drop: a DataTransfer holding the file, dispatched on the zone.
    const dataTransfer = await page.evaluateHandle(
      ({ base64, name }) => {
        const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
        const transfer = new DataTransfer();
        transfer.items.add(new File([bytes], name, { type: "video/mp4" }));
        return transfer;
      },
      { base64: videoBase64, name: FILE_NAME },
    );
    await zone.dispatchEvent("dragover", { dataTransfer });
    await zone.dispatchEvent("drop", { dataTransfer });
    await page.getByText(`Uploaded ${FILE_NAME}.`).waitFor({ timeout: 60_000 });
    await screenshot(page, "20-jobs-uploaded");

    const progress = await page.evaluate(() => (window as unknown as { uploadProgress: number[] }).uploadProgress);
    expect(progress.at(-1)).toBe(100);
    expect(progress.every((value, i) => i === 0 || value >= progress[i - 1]!)).toBe(true);
    const uploadId = await page.locator("input[name=upload_id]").inputValue();
    expect(uploadId).toMatch(/^upl_[A-Za-z0-9]+$/);
    // The URL field is no longer required once a file is uploaded.
    await expect(page.getByLabel("Video URL").evaluate((input) => (input as HTMLInputElement).required)).resolves.toBe(false);

    await page.getByLabel("Video type").selectOption("vlog");
    await page.getByRole("button", { name: "Submit video" }).click();
    await page.waitForURL(/queued=job_/);
    const jobId = new URL(page.url()).searchParams.get("queued") ?? "";
    const card = page.locator(`article[data-job="${jobId}"]`);
    await expect(card.textContent()).resolves.toContain(FILE_NAME);
    await card.locator(".status-completed").waitFor({ timeout: JOB_DEADLINE_MS });
    await screenshot(page, "21-jobs-upload-completed");
  });
});
