import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { configFromForm } from "../../src/dashboard/pages/config-input.ts";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { accountState } from "../../src/account/stub.ts";
import { clipReport, EngineClient, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { api, expectProblem } from "./helpers.ts";
import { deliver, VIDEO_URL } from "./jobs-helpers.ts";
import { alertText, csrfTokenIn, Visitor } from "./dashboard-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

async function signedIn(): Promise<{ visitor: Visitor; token: string; accountId: string; email: string }> {
  const visitor = new Visitor();
  const { email } = await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/keys")).text());
  const row = await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first<{ id: string }>();
  return { visitor, token, accountId: row?.id ?? "", email };
}

function secretIn(html: string): string | null {
  return /<code id="new-key">(ck_live_[0-9A-Za-z]+)<\/code>/.exec(html)?.[1] ?? null;
}

describe("API keys page", () => {
  it("shows a new key once, lists it by prefix and last four, and revocation stops it at the next request", async () => {
    const { visitor, token } = await signedIn();
    const created = await visitor.post("/dashboard/keys", { csrf_token: token, name: "ci server" });
    expect(created.status).toBe(200);
    expect(created.headers.get("Cache-Control")).toBe("no-store");
    const html = await created.text();
    const secret = secretIn(html);
    expect(secret).not.toBeNull();
    expect(html).toContain("will not be shown again");
    expect(html).toContain('data-copy="new-key"');

    const key = { apiKey: secret ?? "" };
    const usage = await api(key, "/api/v1/usage");
    expect(usage.status).toBe(200);
    expect(await usage.json()).toMatchObject({ plan: "free", credits_total: 60, credits_remaining: 60 });

    const list = await (await visitor.get("/dashboard/keys")).text();
    expect(list).not.toContain(secret);
    expect(list).toContain(`${secret?.slice(0, 12)}…${secret?.slice(-4)}`);
    expect(list).toContain("ci server");
    const keyId = /data-key-id="(key_[A-Za-z0-9]+)"/.exec(list)?.[1] ?? "";

    const confirm = await visitor.get(`/dashboard/keys/${keyId}/revoke`);
    expect(await confirm.text()).toContain("This cannot be undone");
    // The GET only asks: the key still works.
    expect((await api(key, "/api/v1/usage")).status).toBe(200);
    const revoked = await visitor.post(`/dashboard/keys/${keyId}/revoke`, { csrf_token: token });
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).toContain("is revoked");
    await expectProblem(await api(key, "/api/v1/usage"), 401, "unauthorized");
    expect(await (await visitor.get("/dashboard/keys")).text()).toMatch(/Revoked <time/);
  });

  it("cannot revoke another account's key", async () => {
    const owner = await signedIn();
    const secret = secretIn(await (await owner.visitor.post("/dashboard/keys", { csrf_token: owner.token, name: "mine" })).text()) ?? "";
    const keyId = /data-key-id="(key_[A-Za-z0-9]+)"/.exec(await (await owner.visitor.get("/dashboard/keys")).text())?.[1] ?? "";
    const intruder = await signedIn();
    const res = await intruder.visitor.post(`/dashboard/keys/${keyId}/revoke`, { csrf_token: intruder.token });
    expect(res.status).toBe(303);
    expect((await api({ apiKey: secret }, "/api/v1/usage")).status).toBe(200);
  });

  it("refuses an empty key name", async () => {
    const { visitor, token } = await signedIn();
    const res = await visitor.post("/dashboard/keys", { csrf_token: token, name: "   " });
    expect(res.status).toBe(400);
    expect(alertText(await res.text())).toBe("Give the key a name.");
  });
});

describe("configurations page", () => {
  it("shows the defaults in the new-configuration form", async () => {
    const { visitor } = await signedIn();
    const html = await (await visitor.get("/dashboard/configs")).text();
    expect(html).toContain(`name="min_clip_seconds" type="number" inputmode="numeric" min="5" max="120" step="1" value="${DEFAULT_CLIP_CONFIG.min_clip_seconds}"`);
    expect(html).toContain(`<option value="9:16" selected="">`);
    expect(html).toContain(`<option value="1080" selected="">`);
    expect(html).toContain(`<option value="auto" selected="">`);
  });

  it("creates, edits and deletes; the API sees the same configuration under config_name", async () => {
    const { visitor, token } = await signedIn();
    const fields = { csrf_token: token, name: "quick", aspect_ratio: "1:1", resolution: "720", min_clip_seconds: "5", max_clip_seconds: "10", max_clips: "2", reframe: "auto" };
    const created = await visitor.post("/dashboard/configs", fields);
    expect(created.status).toBe(200);
    expect(await created.text()).toContain("Configuration “quick” saved.");
    const key = secretIn(await (await visitor.post("/dashboard/keys", { csrf_token: token, name: "k" })).text()) ?? "";
    const read = async () => (await api({ apiKey: key }, "/api/v1/configs/quick")).json<Record<string, unknown>>();
    expect(await read()).toMatchObject({ name: "quick", aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 2, reframe: "auto" });

    const duplicate = await visitor.post("/dashboard/configs", fields);
    expect(duplicate.status).toBe(409);

    const edited = await visitor.post("/dashboard/configs/quick", { ...fields, max_clips: "3", aspect_ratio: "16:9" });
    expect(edited.status).toBe(200);
    expect(await read()).toMatchObject({ aspect_ratio: "16:9", max_clips: 3, resolution: 720 });

    expect(await (await visitor.get("/dashboard/configs/quick/delete")).text()).toContain("Delete configuration");
    expect((await api({ apiKey: key }, "/api/v1/configs/quick")).status).toBe(200);
    await visitor.post("/dashboard/configs/quick/delete", { csrf_token: token });
    await expectProblem(await api({ apiKey: key }, "/api/v1/configs/quick"), 404, "not_found");
  });

  it("validates with the contract's schema and saves nothing invalid", async () => {
    const { visitor, token } = await signedIn();
    const res = await visitor.post("/dashboard/configs", { csrf_token: token, name: "Bad Name", max_clips: "0", resolution: "480", max_clip_seconds: "ten" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('<p class="error" id="config-name-error">must be 1-64 characters');
    expect(html).toContain('<p class="error" id="config-max_clips-error">Must be at least 1.</p>');
    expect(html).toContain('<p class="error" id="config-resolution-error">Choose one of the listed options.</p>');
    expect(html).toContain('<p class="error" id="config-max_clip_seconds-error">Enter a whole number.</p>');
    // What was typed is kept in the form.
    expect(html).toContain('value="Bad Name"');
    expect(html).toContain('name="max_clips" type="number" inputmode="numeric" min="1" max="20" step="1" value="0"');

    // The schema's cross-field rule.
    const crossed = await visitor.post("/dashboard/configs", { csrf_token: token, name: "crossed", min_clip_seconds: "40", max_clip_seconds: "30" });
    expect(crossed.status).toBe(400);
    expect(await crossed.text()).toContain('<p class="error" id="config-max_clip_seconds-error">max_clip_seconds must be at least min_clip_seconds</p>');
    expect(await (await visitor.get("/dashboard/configs")).text()).toContain("No saved configurations yet");
  });

  it("maps form text onto ClipConfig: empty fields take the defaults, non-numbers are schema errors", () => {
    expect(configFromForm({})).toEqual({ ok: true, config: DEFAULT_CLIP_CONFIG });
    expect(configFromForm({ max_clips: " 3 ", resolution: "720" })).toEqual({ ok: true, config: { ...DEFAULT_CLIP_CONFIG, max_clips: 3, resolution: 720 } });
    const bad = configFromForm({ max_clips: "three", min_clip_seconds: "7.5", aspect_ratio: "3:2" });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(Object.keys(bad.errors).sort()).toEqual(["aspect_ratio", "max_clips", "min_clip_seconds"]);
  });
});

describe("jobs page", () => {
  it("submits through the API's rules: the job appears with its configuration, a second one is refused by the active-job limit", async () => {
    const { visitor, token, accountId } = await signedIn();
    await visitor.post("/dashboard/configs", { csrf_token: token, name: "short", max_clips: "1", resolution: "720" });
    const res = await visitor.post("/dashboard/jobs", { csrf_token: token, video_url: VIDEO_URL, video_type: "lecture", config_name: "short" });
    expect(res.status).toBe(303);
    const jobId = /queued=(job_[A-Za-z0-9]+)/.exec(res.headers.get("Location") ?? "")?.[1] ?? "";
    const row = await env.DB.prepare(`SELECT account_id, video_type, config_name, config_json FROM jobs WHERE id = ?`).bind(jobId).first<Record<string, string>>();
    expect(row).toMatchObject({ account_id: accountId, video_type: "lecture", config_name: "short" });
    expect(JSON.parse(row?.config_json ?? "{}")).toMatchObject({ max_clips: 1, resolution: 720 });

    const page = await (await visitor.get(`/dashboard/jobs?queued=${jobId}`)).text();
    expect(page).toContain(`data-live-job="${jobId}"`);
    expect(page).toContain("<progress");
    expect(page).toContain("/status.json");

    const second = await visitor.post("/dashboard/jobs", { csrf_token: token, video_url: VIDEO_URL, video_type: "general", config_name: "" });
    expect(second.status).toBe(409);
    expect(alertText(await second.text())).toBe("The account already has an active job.");

    const status = await visitor.get(`/dashboard/jobs/${jobId}/status.json`);
    expect(status.status).toBe(200);
    const body = await status.json<{ job_id: string; status: string; progress: number; step: string }>();
    expect(body.job_id).toBe(jobId);
    expect(["queued", "processing"]).toContain(body.status);
    expect(typeof body.progress).toBe("number");

    // Another account sees neither the status nor the card.
    const other = await signedIn();
    expect((await other.visitor.get(`/dashboard/jobs/${jobId}/status.json`)).status).toBe(404);
    expect((await other.visitor.get(`/dashboard/jobs/${jobId}/card`)).status).toBe(404);
  });

  it("status.json shows a processing job's live progress, which lives in the account's Durable Object and not in D1", async () => {
    const { visitor, token, accountId, email } = await signedIn();
    const res = await visitor.post("/dashboard/jobs", { csrf_token: token, video_url: VIDEO_URL, video_type: "general", config_name: "" });
    const jobId = /queued=(job_[A-Za-z0-9]+)/.exec(res.headers.get("Location") ?? "")?.[1] ?? "";
    await deliver({ accountId, email, apiKey: "", keyId: "" }, jobId);
    const start = await waitFor(() => engine.starts(jobId).at(-1), `a StartJob for ${jobId}`);
    expect((await EngineClient.from(start).progress({ progress: 37, step: "Rendering clip 2 of 5" })).status).toBe(200);

    const row = await env.DB.prepare(`SELECT progress FROM jobs WHERE id = ?`).bind(jobId).first<{ progress: number }>();
    expect(row?.progress).toBe(0);
    const body = await (await visitor.get(`/dashboard/jobs/${jobId}/status.json`)).json<{ status: string; progress: number; step: string }>();
    expect(body).toMatchObject({ status: "processing", progress: 37, step: "Rendering clip 2 of 5" });
  });

  it("status.json with Prefer: wait holds the read until the job ends and answers it completed (the job page's live read)", async () => {
    const { visitor, token, accountId, email } = await signedIn();
    const res = await visitor.post("/dashboard/jobs", { csrf_token: token, video_url: VIDEO_URL, video_type: "general", config_name: "" });
    const jobId = /queued=(job_[A-Za-z0-9]+)/.exec(res.headers.get("Location") ?? "")?.[1] ?? "";
    await deliver({ accountId, email, apiKey: "", keyId: "" }, jobId);
    const client = EngineClient.from(await waitFor(() => engine.starts(jobId).at(-1), `a StartJob for ${jobId}`));
    await client.probe({ duration_seconds: 42, title: "Held on the page" });
    await client.uploadClip(0, 512);

    const held = visitor.get(`/dashboard/jobs/${jobId}/status.json`, { Prefer: "wait=60" });
    // The read waits in the account's Durable Object, not in a loop of reads.
    const stub = accountState(env, accountId);
    await waitFor(async () => ((await stub.heldReads(jobId)) === 1 ? true : undefined), `the page's read held on ${jobId}`);
    await expectAck(await client.complete({ title: "Held on the page", source_duration_seconds: 42, clips: [clipReport(0)] }));

    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("Preference-Applied")).toBe("wait=60");
    expect(await answer.json()).toMatchObject({ job_id: jobId, status: "completed", clips_count: 1 });
    // A job already ended answers at once, as without the preference.
    const again = await visitor.get(`/dashboard/jobs/${jobId}/status.json`, { Prefer: "wait=60" });
    expect(await again.json()).toMatchObject({ status: "completed" });
    expect(await stub.heldReads(jobId)).toBe(0);
  });

  it("refuses what the API refuses: bad URL, unknown type or configuration, no credits", async () => {
    const { visitor, token, accountId } = await signedIn();
    const cases: [Record<string, string>, number, RegExp][] = [
      [{ video_url: "ftp://example.com/a.mp4", video_type: "general" }, 400, /./],
      [{ video_url: "http://127.0.0.1/a.mp4", video_type: "general" }, 400, /./],
      [{ video_url: VIDEO_URL, video_type: "cooking" }, 400, /video_type must be one of/],
      [{ video_url: VIDEO_URL, video_type: "general", config_name: "missing" }, 422, /No saved configuration named "missing"/],
    ];
    for (const [fields, status, message] of cases) {
      const res = await visitor.post("/dashboard/jobs", { csrf_token: token, config_name: "", ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(status);
      const html = await res.text();
      expect(alertText(html)).toMatch(message);
      // The form keeps what was typed.
      expect(html).toContain(`value="${fields.video_url}"`);
    }
    await env.DB.prepare(`UPDATE accounts SET credits_used = 60 WHERE id = ?`).bind(accountId).run();
    const broke = await visitor.post("/dashboard/jobs", { csrf_token: token, video_url: VIDEO_URL, video_type: "general", config_name: "" });
    expect(broke.status).toBe(402);
    expect(alertText(await broke.text())).toBe("No credits left in this period.");
    const count = await env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`).bind(accountId).first<{ n: number }>();
    expect(count?.n).toBe(0);
  });
});

describe("usage page", () => {
  it("shows credits remaining of total, the plan, and each job's credits", async () => {
    const { visitor, token, accountId } = await signedIn();
    await visitor.post("/dashboard/jobs", { csrf_token: token, video_url: VIDEO_URL, video_type: "general", config_name: "" });
    const jobId = (await env.DB.prepare(`SELECT id FROM jobs WHERE account_id = ?`).bind(accountId).first<{ id: string }>())?.id ?? "";
    // As if the job had completed after 2.5 minutes of source.
    await env.DB.batch([
      env.DB.prepare(`UPDATE jobs SET status = 'completed', progress = 100, credits_charged = 3, source_duration_seconds = 150, completed_at = ? WHERE id = ?`).bind(new Date().toISOString(), jobId),
      env.DB.prepare(`UPDATE accounts SET credits_used = 3 WHERE id = ?`).bind(accountId),
    ]);
    const html = await (await visitor.get("/dashboard/usage")).text();
    expect(html).toContain("57 of 60 credits remaining");
    expect(html).toContain('<dd data-plan="true">free</dd>');
    expect(html).toMatch(new RegExp(`data-job="${jobId}"[\\s\\S]*?<td data-label="Credits" data-credits-used="true">3</td>`));
  });
});
