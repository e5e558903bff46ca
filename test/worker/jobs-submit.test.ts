import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { FakeEngine } from "./engine-stub.ts";
import { adminFetch, api, createAccount, expectProblem } from "./helpers.ts";
import { getJob, submit, VIDEO_URL, type JobJson } from "./jobs-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

describe("POST /api/v1/jobs", () => {
  it("creates a queued job and answers 201 with job_id, status and message", async () => {
    const account = await createAccount();
    const res = await submit(account);
    expect(res.status).toBe(201);
    const body = await res.json<JobJson>();
    // 21 base62 characters carry 120 random bits (SPEC: at least 80).
    expect(body.job_id).toMatch(/^job_[A-Za-z0-9]{21}$/);
    expect(body.status).toBe("queued");
    expect(body.message).toContain(body.job_id);
    expect(body.video_url).toBe(VIDEO_URL);
    expect(body.video_type).toBe("podcast");
    expect(body.config_name).toBeNull();
    const job = await getJob(account, body.job_id);
    expect(job.status === "queued" || job.status === "processing").toBe(true);
  });

  it("gives every job a different id", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const account = await createAccount();
      const res = await submit(account);
      ids.add((await res.json<JobJson>()).job_id);
    }
    expect(ids.size).toBe(5);
  });

  it("rejects missing and mistyped fields with 400 invalid_request listing them", async () => {
    const account = await createAccount();
    const problem = await expectProblem(await submit(account, { video_type: 3 }), 400, "invalid_request");
    const paths = problem.errors?.map((e) => e.path).sort();
    expect(paths).toEqual(["video_type", "video_url"]);
  });

  it("rejects an unknown video_type with 400 invalid_video_type listing the allowed values", async () => {
    const account = await createAccount();
    const problem = await expectProblem(
      await submit(account, { video_url: VIDEO_URL, video_type: "cooking" }),
      400,
      "invalid_video_type",
    );
    for (const value of ["podcast", "lecture", "gaming", "sports", "vlog", "general"]) {
      expect(problem.detail).toContain(value);
    }
    expect(problem.allowed_values).toEqual(["podcast", "lecture", "gaming", "sports", "vlog", "general"]);
  });

  it.each([
    ["ftp scheme", "ftp://videos.example.com/a.mp4"],
    ["file scheme", "file:///etc/passwd"],
    ["not a URL", "just some words"],
    ["credentials", "https://user:secret@videos.example.com/a.mp4"],
    ["loopback", "http://127.0.0.1/a.mp4"],
    ["loopback in hex", "http://0x7f.0.0.1/a.mp4"],
    ["loopback as one number", "http://2130706433/a.mp4"],
    ["loopback in octal", "http://0177.0.0.1/a.mp4"],
    ["private 10/8", "http://10.1.2.3/a.mp4"],
    ["private 192.168", "https://192.168.1.20/a.mp4"],
    ["private 172.16/12", "http://172.31.255.1/a.mp4"],
    ["metadata", "http://169.254.169.254/latest/meta-data/"],
    ["localhost", "http://localhost:8080/a.mp4"],
    ["metadata name", "http://metadata.google.internal/computeMetadata/v1/"],
    ["IPv6 loopback", "http://[::1]/a.mp4"],
    ["IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]/a.mp4"],
    ["IPv6 unique local", "http://[fd00:ec2::254]/a.mp4"],
    ["IPv6 link-local", "http://[fe80::1]/a.mp4"],
    ["unspecified", "http://0.0.0.0/a.mp4"],
    ["too long", `https://videos.example.com/${"a".repeat(2100)}.mp4`],
  ])("rejects %s with 400 invalid_video_url", async (_name, url) => {
    const account = await createAccount();
    await expectProblem(await submit(account, { video_url: url, video_type: "general" }), 400, "invalid_video_url");
  });

  it("accepts public hosts, including IPv6 and platform URLs", async () => {
    for (const url of ["https://www.youtube.com/watch?v=abc", "http://[2606:4700::1111]/v.mp4", "http://8.8.8.8/v.mp4"]) {
      const account = await createAccount();
      const res = await submit(account, { video_url: url, video_type: "general" });
      expect(res.status, url).toBe(201);
    }
  });

  it("answers 402 insufficient_credits when no credits are left", async () => {
    const account = await createAccount();
    // The free plan's 60 credits, all used up.
    await env.DB.prepare(`UPDATE accounts SET credits_used = 60 WHERE id = ?`).bind(account.accountId).run();
    await expectProblem(await submit(account), 402, "insufficient_credits");
  });

  it("answers 422 config_not_found for an unknown config_name", async () => {
    const account = await createAccount();
    await expectProblem(
      await submit(account, { video_url: VIDEO_URL, video_type: "general", config_name: "nope" }),
      422,
      "config_not_found",
    );
  });

  it("freezes the named configuration into the job", async () => {
    const account = await createAccount();
    const saved = {
      aspect_ratio: "1:1",
      resolution: 720,
      min_clip_seconds: 10,
      max_clip_seconds: 30,
      max_clips: 3,
      reframe: "fit",
      captions: "sidecar",
      caption_style: "boxed",
      caption_position: "center",
    };
    const put = await api(account, "/api/v1/configs/square", { method: "PUT", body: JSON.stringify(saved) });
    expect(put.status).toBeLessThan(300);
    const res = await submit(account, { video_url: VIDEO_URL, video_type: "vlog", config_name: "square" });
    expect(res.status).toBe(201);
    const { job_id } = await res.json<JobJson>();
    // A later edit does not change the job.
    await api(account, "/api/v1/configs/square", { method: "PUT", body: JSON.stringify({ ...saved, max_clips: 9 }) });
    const row = await env.DB.prepare(`SELECT config_name, config_json FROM jobs WHERE id = ?`).bind(job_id).first<{ config_name: string; config_json: string }>();
    expect(row?.config_name).toBe("square");
    // Omitted fields are frozen with their defaults.
    expect(JSON.parse(row!.config_json)).toEqual({ ...DEFAULT_CLIP_CONFIG, ...saved, layout: "single" });
  });

  it("answers 409 active_job_limit with active_job_id for a second job", async () => {
    const account = await createAccount();
    const first = await (await submit(account)).json<JobJson>();
    const problem = await expectProblem(await submit(account), 409, "active_job_limit");
    expect(problem.active_job_id).toBe(first.job_id);
  });

  it("a downgrade lowers the active-job limit at once, whatever plan the key lookup cache holds", async () => {
    await env.DB.prepare(
      `INSERT OR IGNORE INTO plans (name, credits_per_period, requests_per_minute, max_active_jobs) VALUES ('team', 600, 600, 3)`,
    ).run();
    const account = await createAccount();
    const setPlan = (plan: string) =>
      adminFetch(`/admin/v1/accounts/${account.accountId}/plan`, { method: "PUT", body: JSON.stringify({ plan }) }).then((r) => r.text());
    await setPlan("team");
    // These requests cache the key with the team plan (3 active jobs) in this isolate.
    expect((await submit(account)).status).toBe(201);
    expect((await submit(account)).status).toBe(201);
    await setPlan("free");
    const problem = await expectProblem(await submit(account), 409, "active_job_limit");
    expect(typeof problem.active_job_id).toBe("string");
  });

  it("lets exactly one of many simultaneous submissions through", async () => {
    const account = await createAccount("unmetered");
    const responses = await Promise.all(Array.from({ length: 10 }, () => submit(account)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    await Promise.all(responses.map((r) => r.text()));
    const count = await env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`).bind(account.accountId).first<{ n: number }>();
    expect(count?.n).toBe(1);
  });
});
