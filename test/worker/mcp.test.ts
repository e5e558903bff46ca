/**
 * /mcp with the MCP SDK's own client (@modelcontextprotocol/client, its
 * Streamable HTTP transport) over the Worker's fetch handler: real D1, R2,
 * Durable Objects, the engine faked at its HTTP boundary as in the other
 * suites. Both protocol eras the server serves are used: 2026-07-28 (pinned)
 * and the 2025 initialize handshake desktop clients still speak.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { env, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { answerText as text, callTool as call, ok, problem, TOOL_NAMES } from "../e2e/harness/mcp-answers.ts";
import { accountState } from "../../src/account/stub.ts";
import { clipReport, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { api, BASE, createAccount, type TestAccount } from "./helpers.ts";
import { startJob, submitUndelivered } from "./jobs-helpers.ts";
import { captionedJob } from "./speech-helpers.ts";
import { bytesOf, patch, TUS } from "./uploads-helpers.ts";

const MODERN = { mode: { pin: "2026-07-28" } } as const;

/** `rateLimits` collects the RateLimit header of every HTTP answer the client gets. */
async function connect(apiKey: string | null, era: "modern" | "legacy" = "modern", rateLimits: string[] = []): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: async (url, init) => {
      const res = await SELF.fetch(url, init);
      rateLimits.push(res.headers.get("RateLimit") ?? "");
      return res;
    },
    requestInit: apiKey === null ? {} : { headers: { Authorization: `Bearer ${apiKey}` } },
  });
  const client = new Client({ name: "clipjobs-worker-test", version: "1.0.0" }, era === "modern" ? { versionNegotiation: MODERN } : {});
  await client.connect(transport);
  return client;
}

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

// Generous: these make dozens of requests each, and the machine may be loaded.
const SUITE = { timeout: 60_000 };

describe("/mcp: tools", SUITE, () => {
  it("lists every tool with a description and a JSON Schema, in both protocol eras", async () => {
    const account = await createAccount("unmetered");
    for (const era of ["modern", "legacy"] as const) {
      const client = await connect(account.apiKey, era);
      expect(client.getNegotiatedProtocolVersion()).toBe(era === "modern" ? "2026-07-28" : "2025-11-25");
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
      for (const tool of tools) {
        expect(tool.description?.length, tool.name).toBeGreaterThan(60);
        expect(tool.inputSchema.type).toBe("object");
      }
      const submit = tools.find((tool) => tool.name === "submit_job")!;
      const properties = submit.inputSchema.properties as Record<string, { enum?: string[]; description?: string }>;
      expect(properties.video_type?.enum).toEqual(["podcast", "lecture", "gaming", "sports", "vlog", "general"]);
      expect(properties.video_type?.description).toContain("podcast: Speech-driven");
      expect(submit.inputSchema.required).toEqual(["video_type"]);
      await client.close();
    }
  });

  it("submit, get, list and cancel act on the same jobs the REST API shows", async () => {
    const account = await createAccount("unmetered");
    const client = await connect(account.apiKey);
    const submitted = ok(await call(client, "submit_job", { video_url: "https://videos.example.com/talk.mp4", video_type: "podcast" }));
    expect(submitted).toMatchObject({ status: "queued", replayed: false });
    const jobId = submitted.job_id as string;

    // The queue consumer may start it at any moment: queued or processing, with progress and step.
    expect(ok(await call(client, "get_job", { job_id: jobId }))).toMatchObject({ job_id: jobId, status: expect.stringMatching(/^(queued|processing)$/), progress: 0, step: expect.any(String) });
    expect(ok(await call(client, "list_jobs", { limit: 5 }))).toMatchObject({ count: 1, next_cursor: null, jobs: [{ job_id: jobId }] });
    expect(ok(await call(client, "list_jobs", { status: "completed" }))).toMatchObject({ count: 0 });

    expect(ok(await call(client, "cancel_job", { job_id: jobId }))).toMatchObject({ job_id: jobId, status: "canceled" });
    const rest = await (await api(account, `/api/v1/jobs/${jobId}`)).json<Record<string, unknown>>();
    expect(rest).toMatchObject({ status: "canceled" });
    const viaMcp = await call(client, "get_job", { job_id: jobId });
    expect(ok(viaMcp)).toEqual(rest);
    expect(JSON.parse(text(viaMcp))).toEqual(rest);
    problem(await call(client, "cancel_job", { job_id: jobId }), "job_not_cancelable");
  });

  it("get_job with wait_seconds answers as the job ends, held in the account's Durable Object; a job already ended answers at once", async () => {
    const account = await createAccount("unmetered");
    const engineClient = await startJob(account, engine);
    const jobId = engineClient.jobId;
    await engineClient.probe({ duration_seconds: 42, title: "Waited for" });
    await engineClient.uploadClip(0, 512);
    const client = await connect(account.apiKey);

    const held = call(client, "get_job", { job_id: jobId, wait_seconds: 50 });
    const stub = accountState(env, account.accountId);
    await waitFor(async () => ((await stub.heldReads(jobId)) === 1 ? true : undefined), `get_job held on ${jobId}`);
    await expectAck(await engineClient.complete({ title: "Waited for", source_duration_seconds: 42, clips: [clipReport(0)] }));
    const answer = ok(await held);
    expect(answer).toMatchObject({ job_id: jobId, status: "completed", clips_count: 1 });
    expect(answer).toEqual(await (await api(account, `/api/v1/jobs/${jobId}`)).json());

    expect(ok(await call(client, "get_job", { job_id: jobId, wait_seconds: 50 }))).toMatchObject({ status: "completed" });
    expect(await stub.heldReads(jobId)).toBe(0);
    problem(await call(client, "get_job", { job_id: jobId, wait_seconds: 51 }), "invalid_request");
    problem(await call(client, "get_job", { job_id: "job_0000000000000000000000", wait_seconds: 5 }), "not_found");
  });

  it("submit_job steers like the REST body: prompt, time range, silence and filler removal", async () => {
    const account = await createAccount("unmetered");
    const client = await connect(account.apiKey);
    const steering = { prompt: "the parts about pricing", time_range: { start_seconds: 600, end_seconds: 2400 }, remove_silence: "tight", remove_fillers: true };
    const submitted = ok(await call(client, "submit_job", { video_url: "https://videos.example.com/call.mp4", video_type: "podcast", ...steering }));
    expect(await (await api(account, `/api/v1/jobs/${submitted.job_id as string}`)).json()).toMatchObject(steering);
    await call(client, "cancel_job", { job_id: submitted.job_id });

    // Shorter than the shortest clip (15 s by default): the service's own code, as for REST.
    const short = { video_url: "https://videos.example.com/call.mp4", video_type: "podcast", time_range: { start_seconds: 10, end_seconds: 12 } };
    problem(await call(client, "submit_job", short), "invalid_time_range");
    const blank = problem(await call(client, "submit_job", { ...short, time_range: undefined, prompt: "   " }), "invalid_request");
    expect(blank.errors).toEqual([{ path: "prompt", message: "prompt must contain a word" }]);
  });

  it("an idempotency key makes a retried submission return the first job", async () => {
    const account = await createAccount("unmetered");
    const client = await connect(account.apiKey);
    const args = { video_url: "https://videos.example.com/once.mp4", video_type: "vlog", language: "de", idempotency_key: "retry-me-1" };
    const first = ok(await call(client, "submit_job", args));
    expect(await (await api(account, `/api/v1/jobs/${first.job_id as string}`)).json()).toMatchObject({ language_hint: "de" });
    const again = ok(await call(client, "submit_job", args));
    expect(again).toMatchObject({ job_id: first.job_id, replayed: true });
    problem(await call(client, "submit_job", { ...args, video_type: "lecture" }), "idempotency_key_reused");
    const page = await (await api(account, "/api/v1/jobs?status=all")).json<{ count: number }>();
    expect(page.count).toBe(1);
  });

  it("reads a completed job's clips and its transcript with times, whole or in part", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(engine, account);
    const client = await connect(account.apiKey);

    const job = ok(await call(client, "get_job", { job_id: jobId }));
    expect(job).toMatchObject({ status: "completed", clips_count: 2 });
    const clips = job.clips as { url: string; title: string | null; text: string | null }[];
    expect(clips[0]).toMatchObject({ title: "Why do clips matter?", text: "Why do clips matter? Because people scroll" });
    expect(clips[0]!.url).toMatch(/^http:\/\/worker\.test\/cdn\/.+\.mp4$/);

    const whole = await call(client, "get_transcript", { job_id: jobId });
    expect(text(whole)).toBe(
      `Transcript of ${jobId} (language: en, source: subtitle_track)\n[0:01.0-0:02.4] Why do clips matter?\n[0:03.0-0:04.4] Because people <b>scroll</b>`,
    );
    expect(ok(whole)).toMatchObject({ job_id: jobId, language: "en", source: "subtitle_track", sentences: [{ start: 1, end: 2.4 }, { start: 3, end: 4.4 }] });
    const part = ok(await call(client, "get_transcript", { job_id: jobId, from_seconds: 2.5 }));
    expect(part.sentences).toEqual([{ text: "Because people <b>scroll</b>", start: 3, end: 4.4 }]);
    const none = await call(client, "get_transcript", { job_id: jobId, from_seconds: 10, to_seconds: 20 });
    expect(text(none)).toContain("(no speech in this part of the video)");
  });

  it("exports a completed job's cut as the REST route does, and refuses what it refuses", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(engine, account);
    const client = await connect(account.apiKey);
    const answer = await call(client, "export_job", { job_id: jobId, format: "edl" });
    const rest = await (await api(account, `/api/v1/jobs/${jobId}/export?format=edl`)).text();
    expect(text(answer)).toBe(rest);
    expect(ok(answer)).toMatchObject({ job_id: jobId, format: "edl", file_name: `${jobId}.edl`, content: rest });
    expect(rest.match(/^\d{3} {2}/gm)).toHaveLength(2);
    problem(await call(client, "export_job", { job_id: jobId, format: "aaf" }), "invalid_request");
    const queued = await submitUndelivered(account);
    problem(await call(client, "export_job", { job_id: queued, format: "otio" }), "job_not_completed");
    problem(await call(await connect((await createAccount("unmetered")).apiKey), "export_job", { job_id: jobId, format: "otio" }), "not_found");
  });

  it("edits a clip and cuts a new one as the REST routes do, and refuses what they refuse", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(engine, account);
    const client = await connect(account.apiKey);
    const edited = ok(await call(client, "edit_clip", { job_id: jobId, index: 0, end_seconds: 19.5, words: [{ index: 2, text: "shorts" }] }));
    expect(edited).toMatchObject({ index: 0, version: 1, edit: { status: "queued", requested: { end_seconds: 19.5 } } });
    const row = await env.DB.prepare(`SELECT clip_edit_json FROM clip_edits WHERE job_id = ? AND idx = 0`).bind(jobId).first<{ clip_edit_json: string }>();
    const sent = JSON.parse(row!.clip_edit_json) as { end_seconds: number; words: { text: string }[] };
    expect(sent.end_seconds).toBe(19.5);
    expect(sent.words.map((w) => w.text)).toContain("shorts");
    problem(await call(client, "edit_clip", { job_id: jobId, index: 0, title: "Again" }), "clip_edit_in_progress");
    problem(await call(client, "edit_clip", { job_id: jobId, index: 1 }), "invalid_request");
    problem(await call(client, "edit_clip", { job_id: jobId, index: 1, start_seconds: 30, end_seconds: 25 }), "invalid_clip_span");
    problem(await call(client, "edit_clip", { job_id: jobId, index: 1, words: [{ index: 3, text: "x" }] }), "invalid_word");
    problem(await call(client, "add_clip", { job_id: jobId, start_seconds: 20, end_seconds: 40, colour: "red" }), "invalid_request");
    // The unmetered plan runs one active job: the pending edit holds it.
    problem(await call(client, "add_clip", { job_id: jobId, start_seconds: 20, end_seconds: 40 }), "active_job_limit");
    problem(await call(await connect((await createAccount("unmetered")).apiKey), "add_clip", { job_id: jobId, start_seconds: 20, end_seconds: 40 }), "not_found");
  });

  it("usage and configurations: the same figures and records as the REST API", async () => {
    const account = await createAccount("pro");
    const client = await connect(account.apiKey);
    expect(ok(await call(client, "get_usage"))).toEqual(await (await api(account, "/api/v1/usage")).json());
    expect(ok(await call(client, "list_configs"))).toEqual({ configs: [], count: 0 });

    const saved = ok(await call(client, "save_config", { name: "square-short", config: { aspect_ratio: "1:1", max_clips: 3 } }));
    expect(saved).toMatchObject({ created: true, config: { name: "square-short", aspect_ratio: "1:1", max_clips: 3, resolution: 1080 } });
    const rest = await (await api(account, "/api/v1/configs/square-short")).json();
    expect((saved.config as Record<string, unknown>)).toEqual(rest);
    expect(ok(await call(client, "save_config", { name: "square-short", config: { aspect_ratio: "1:1" } }))).toMatchObject({ created: false, config: { max_clips: 5 } });
    expect(ok(await call(client, "list_configs"))).toMatchObject({ count: 1, configs: [{ name: "square-short" }] });

    const bad = problem(await call(client, "save_config", { name: "x", config: { min_clip_seconds: 30, max_clip_seconds: 20 } }), "invalid_request");
    expect(bad.errors).toEqual([{ path: "config.max_clip_seconds", message: "max_clip_seconds must be at least min_clip_seconds" }]);
  });

  it("create_upload answers the tus URL and headers; bytes sent there make a job through submit_job", async () => {
    const account = await createAccount("unmetered");
    const client = await connect(account.apiKey);
    const data = bytesOf(3000, 7);
    const upload = ok(await call(client, "create_upload", { file_name: "Board meeting.mp4", size_bytes: data.byteLength }));
    const uploadId = upload.upload_id as string;
    expect(upload).toMatchObject({
      upload_url: `${BASE}/api/v1/uploads/${uploadId}`,
      method: "PATCH",
      size_bytes: 3000,
      headers: { "Tus-Resumable": "1.0.0", "Content-Type": "application/offset+octet-stream" },
      max_chunk_bytes: 50 * 1024 * 1024,
    });
    // The answer never carries the key itself.
    expect(JSON.stringify(upload)).not.toContain(account.apiKey);

    const head = await api(account, `/api/v1/uploads/${uploadId}`, { method: "HEAD", headers: TUS });
    expect(head.headers.get("Upload-Offset")).toBe("0");
    expect((await patch(account, uploadId, 0, data)).status).toBe(204);
    const submitted = ok(await call(client, "submit_job", { upload_id: uploadId, video_type: "general" }));
    const job = await (await api(account, `/api/v1/jobs/${submitted.job_id as string}`)).json();
    expect(job).toMatchObject({ upload_id: uploadId, video_url: null, title: "Board meeting.mp4" });

    problem(await call(client, "create_upload", { file_name: "huge.mp4", size_bytes: 50 * 1024 ** 4 }), "upload_too_large");
  });
});

describe("/mcp: errors are tool errors carrying the problem", SUITE, () => {
  it("a bad, missing or revoked key: the protocol still answers, every tool says unauthorized", async () => {
    const account = await createAccount("unmetered");
    for (const key of ["ck_live_not_a_real_key_000000000000", null]) {
      const client = await connect(key);
      expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
      for (const name of TOOL_NAMES) {
        const refused = problem(await call(client, name, { job_id: "job_x" }), "unauthorized");
        expect(refused.detail).toContain("Authorization: Bearer <API_KEY>");
      }
      await client.close();
    }
    const revoke = await SELF.fetch(`${BASE}/admin/v1/keys/${account.keyId}/revoke`, {
      method: "POST",
      headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expect(revoke.status).toBe(200);
    problem(await call(await connect(account.apiKey), "get_usage"), "unauthorized");
  });

  it("a malformed argument: invalid_request naming each field, nothing created", async () => {
    const account = await createAccount("unmetered");
    const client = await connect(account.apiKey);
    const typed = problem(await call(client, "get_job", { job_id: 42 }), "invalid_request");
    expect(typed.detail).toBe("The arguments of get_job are invalid.");
    expect(typed.errors).toEqual([{ path: "job_id", message: "Invalid input: expected string, received number" }]);

    const both = problem(await call(client, "submit_job", { video_type: "podcast" }), "invalid_request");
    expect(both.errors).toEqual([{ path: "video_url", message: "Send exactly one of video_url and upload_id." }]);
    // A member the submission does not know is refused, as in a REST body; so the URL is missing too.
    const unknown = problem(await call(client, "submit_job", { videoUrl: "https://x.example/v.mp4", video_type: "podcast" }), "invalid_request");
    expect((unknown.errors as { path: string }[]).map((e) => e.path).sort()).toEqual(["(arguments)", "video_url"]);
    problem(await call(client, "submit_job", { video_url: "https://x.example/v.mp4", video_type: "cooking" }), "invalid_video_type");
    problem(await call(client, "submit_job", { video_url: "http://127.0.0.1/v.mp4", video_type: "podcast" }), "invalid_video_url");
    // A field with a code of its own answers it, as a REST body does.
    const language = problem(await call(client, "submit_job", { video_url: "https://x.example/v.mp4", video_type: "vlog", language: "klingon" }), "unsupported_language");
    expect(language.errors).toEqual([expect.objectContaining({ path: "language" })]);
    expect(language.allowed_values).toContain("de");
    problem(await call(client, "list_jobs", { limit: 0 }), "invalid_request");
    problem(await call(client, "list_jobs", { cursor: "not-a-cursor" }), "invalid_request");
    problem(await call(client, "get_transcript", { job_id: "job_x", from_seconds: 5, to_seconds: 1 }), "invalid_request");
    const page = await (await api(account, "/api/v1/jobs?status=all")).json<{ count: number }>();
    expect(page.count).toBe(0);
  });

  it("an unknown job, or another account's: not_found; a job without a transcript says why", async () => {
    const owner = await createAccount("unmetered");
    const stranger = await createAccount("unmetered");
    const jobId = await submitUndelivered(owner);
    const client = await connect(stranger.apiKey);
    for (const id of ["job_doesnotexist0000000000", jobId, "not-even-an-id"]) {
      for (const name of ["get_job", "cancel_job", "get_transcript"]) {
        expect(problem(await call(client, name, { job_id: id }), "not_found").detail).toBe(`No job ${id}.`);
      }
    }
    const queued = problem(await call(await connect(owner.apiKey), "get_transcript", { job_id: jobId }), "transcript_not_found");
    expect(queued.detail).toBe(`Job ${jobId} is queued; a transcript exists only for completed jobs.`);
  });

  it("counts every request in the account's window with the REST API; over it, tools answer rate_limited", async () => {
    const account = await createAccount("free"); // 60 requests a minute
    const rateLimits: string[] = [];
    const client = await connect(account.apiKey, "modern", rateLimits);
    let used = rateLimits.length; // what connecting took (the 2026-07-28 discovery)
    expect(rateLimits.at(-1)).toMatch(new RegExp(`^"default";r=${60 - used};`));
    for (; used < 55; used += 1) expect((await api(account, "/api/v1/usage")).status).toBe(200);
    for (; used < 60; used += 1) ok(await call(client, "get_usage"));
    expect(rateLimits.at(-1)).toMatch(/^"default";r=0;/);
    const refused = problem(await call(client, "get_usage"), "rate_limited");
    expect(refused.retry_after_seconds).toBeGreaterThan(0);
    // The protocol itself still answers, and REST agrees the window is full.
    expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
    expect((await api(account, "/api/v1/usage")).status).toBe(429);
  });

  it("every /mcp answer carries Request-Id and the window's RateLimit headers", async () => {
    const account = await createAccount("free");
    const res = await SELF.fetch(`${BASE}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${account.apiKey}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("Request-Id")).toMatch(/^req_/);
    expect(res.headers.get("RateLimit-Policy")).toBe('"default";q=60;w=60');
    expect(res.headers.get("RateLimit")).toMatch(/^"default";r=59;t=\d+$/);
    await res.body?.cancel();
  });

  it("requests that are not MCP messages get a 4xx or a JSON-RPC error, never a 5xx, with or without a key", async () => {
    const account = await createAccount("unmetered");
    const accept = "application/json, text/event-stream";
    const cases: { method: string; headers?: Record<string, string>; body?: string }[] = [
      { method: "GET", headers: { Accept: "text/event-stream" } },
      { method: "DELETE" },
      { method: "PUT", headers: { "Content-Type": "application/json" }, body: "{}" },
      { method: "POST", headers: { "Content-Type": "text/plain", Accept: accept }, body: "hello" },
      { method: "POST", headers: { "Content-Type": "application/json", Accept: accept }, body: "{not json" },
      { method: "POST", headers: { "Content-Type": "application/json", Accept: accept }, body: "" },
      { method: "POST", headers: { "Content-Type": "application/json", Accept: accept }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call" }) },
      { method: "POST", headers: { "Content-Type": "application/json", Accept: accept }, body: JSON.stringify([1, 2, 3]) },
      { method: "POST", headers: { "Content-Type": "application/json", Accept: accept }, body: `{"pad":"${"x".repeat(70 * 1024)}"}` },
      { method: "POST", headers: { "Content-Type": "application/json", Accept: "text/html" }, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) },
    ];
    const statuses: string[] = [];
    for (const key of [account.apiKey, null]) {
      for (const { method, headers = {}, body } of cases) {
        const res = await SELF.fetch(`${BASE}/mcp`, {
          method,
          headers: { ...headers, ...(key === null ? {} : { Authorization: `Bearer ${key}` }) },
          ...(body === undefined ? {} : { body }),
        });
        const text = await res.text();
        statuses.push(`${method} ${res.status}`);
        expect(res.status, `${method} ${body?.slice(0, 40) ?? ""}`).toBeLessThan(500);
        // A 200 only for a JSON-RPC message, answered with a JSON-RPC error.
        if (res.status < 400) expect(JSON.parse(text.replace(/^(event|data): ?/gm, "").trim().split("\n").at(-1)!)).toMatchObject({ jsonrpc: "2.0", error: { code: expect.any(Number) } });
        expect(res.headers.get("Request-Id")).toMatch(/^req_/);
      }
    }
    console.log(`/mcp non-MCP requests: ${statuses.join(", ")}`);
  });
});
