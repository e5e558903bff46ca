/**
 * One submission contract: the same bodies sent to POST /api/v1/jobs, to the
 * MCP tool submit_job (through the SDK's client) and through the dashboard's
 * form get the same verdict, the same problem `code` when refused; accepted,
 * each makes the same job (languages and steering included), and a resent
 * form with its idempotency key makes one job, as a resent API call does.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { env, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { callTool } from "../e2e/harness/mcp-answers.ts";
import { FakeEngine } from "./engine-stub.ts";
import { api, BASE, issueKey } from "./helpers.ts";
import { VIDEO_URL } from "./jobs-helpers.ts";
import { csrfTokenIn, Visitor } from "./dashboard-helpers.ts";

type Body = Record<string, unknown>;

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

interface Surfaces {
  accountId: string;
  /** The verdict: "created" and the job id, or the problem's code. */
  rest(body: Body): Promise<Verdict>;
  mcp(body: Body): Promise<Verdict>;
  dashboard(body: Body, idempotencyKey?: string): Promise<Verdict>;
}

type Verdict = { created: string } | { code: string };

/** A signed-in dashboard visitor and an API key of the same account, so the three surfaces see one account. */
async function surfaces(): Promise<Surfaces> {
  const visitor = new Visitor();
  const { email } = await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/keys")).text());
  const row = await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first<{ id: string }>();
  const { apiKey } = await issueKey(row!.id);
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: (url, init) => SELF.fetch(url, init),
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
  });
  const client = new Client({ name: "submission-contract-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(transport);
  return {
    accountId: row!.id,
    async rest(body) {
      const res = await api({ apiKey }, "/api/v1/jobs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const answer = await res.json<{ job_id?: string; code?: string }>();
      return res.status === 201 ? { created: answer.job_id! } : { code: answer.code! };
    },
    async mcp(body) {
      const result = await callTool(client, "submit_job", body);
      const content = result.structuredContent as { job_id?: string; code?: string };
      return result.isError ? { code: content.code! } : { created: content.job_id! };
    },
    async dashboard(body, idempotencyKey) {
      const res = await visitor.post("/dashboard/jobs", { csrf_token: token, ...formOf(body), ...(idempotencyKey ? { idempotency_key: idempotencyKey } : {}) });
      if (res.status === 303) return { created: /queued=(job_[A-Za-z0-9]+)/.exec(res.headers.get("Location") ?? "")![1]! };
      const code = /<div class="alert" role="alert" data-code="([a-z_]+)">/.exec(await res.text())?.[1];
      return { code: code ?? `(no code, status ${res.status})` };
    },
  };
}

/** The body as the form's fields carry it: times as seconds, booleans as words, null languages as the form's tokens. */
function formOf(body: Body): Record<string, string> {
  const form: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (name === "time_range") {
      const range = value as { start_seconds: number; end_seconds: number };
      form.range_start = String(range.start_seconds);
      form.range_end = String(range.end_seconds);
    } else if (name === "language" && value === null) form.language = "auto";
    else if (name === "caption_language" && value === null) form.caption_language = "spoken";
    else form[name] = String(value);
  }
  return form;
}

const GOOD = { video_url: VIDEO_URL, video_type: "podcast" };

/** Refused bodies, each with the code every surface must answer. */
const REFUSED: [string, Body, string][] = [
  ["a 3,000-character video_url", { ...GOOD, video_url: `https://videos.example.com/${"a".repeat(2974)}.mp4` }, "invalid_video_url"],
  ["a private video_url", { ...GOOD, video_url: "http://127.0.0.1/v.mp4" }, "invalid_video_url"],
  ["a video_url that is not a URL", { ...GOOD, video_url: "not a url" }, "invalid_video_url"],
  ["neither video_url nor upload_id", { video_type: "podcast" }, "invalid_request"],
  ["both video_url and upload_id", { ...GOOD, upload_id: "upl_abc" }, "invalid_request"],
  ["an unknown video_type", { ...GOOD, video_type: "cooking" }, "invalid_video_type"],
  ["an unknown spoken language", { ...GOOD, language: "klingon" }, "unsupported_language"],
  ["an unknown caption language", { ...GOOD, caption_language: "xx" }, "unsupported_language"],
  ["a prompt over 500 characters", { ...GOOD, prompt: "pricing ".repeat(70) }, "invalid_request"],
  ["a time range ending before it starts", { ...GOOD, time_range: { start_seconds: 60, end_seconds: 10 } }, "invalid_time_range"],
  ["an unknown silence mode", { ...GOOD, remove_silence: "loud" }, "invalid_request"],
  ["a config_name over 64 characters", { ...GOOD, config_name: "c".repeat(65) }, "invalid_request"],
  ["a configuration that does not exist", { ...GOOD, config_name: "nope" }, "config_not_found"],
  ["an ftp captions_url", { ...GOOD, captions_url: "ftp://files.example.com/talk.vtt" }, "invalid_captions_url"],
  ["an upload that does not exist", { upload_id: "upl_missing", video_type: "podcast" }, "not_found"],
];

const ACCEPTED: Body = {
  ...GOOD,
  prompt: "the parts about pricing",
  time_range: { start_seconds: 30, end_seconds: 600 },
  remove_silence: "pauses",
  remove_fillers: true,
  language: "de",
  caption_language: "fr",
};

describe("one submission contract: REST, MCP and the dashboard", { timeout: 60_000 }, () => {
  it("refuse the same bodies with the same code, and create nothing", async () => {
    const on = await surfaces();
    for (const [what, body, code] of REFUSED) {
      const verdicts = { rest: await on.rest(body), mcp: await on.mcp(body), dashboard: await on.dashboard(body) };
      expect(verdicts, what).toEqual({ rest: { code }, mcp: { code }, dashboard: { code } });
    }
    // A member the contract does not know (a form has no such field, so REST and MCP only).
    const unknown = { ...GOOD, max_clips: 3 };
    expect({ rest: await on.rest(unknown), mcp: await on.mcp(unknown) }).toEqual({ rest: { code: "invalid_request" }, mcp: { code: "invalid_request" } });
    const jobs = await env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`).bind(on.accountId).first<{ n: number }>();
    expect(jobs?.n).toBe(0);
  });

  it("accept the same body and make the same job, languages and steering included", async () => {
    const made = [];
    for (const surface of ["rest", "mcp", "dashboard"] as const) {
      const on = await surfaces();
      const verdict = await on[surface](ACCEPTED);
      expect(verdict, surface).toHaveProperty("created");
      const id = (verdict as { created: string }).created;
      made.push(
        await env.DB.prepare(`SELECT video_url, video_type, config_json, time_range_start, time_range_end FROM jobs WHERE id = ?`)
          .bind(id)
          .first(),
      );
    }
    // The resolved configuration carries the prompt, silence, filler and language choices.
    expect(JSON.parse((made[0] as { config_json: string }).config_json)).toMatchObject({ prompt: "the parts about pricing", language: "de", caption_language: "fr", remove_fillers: true });
    expect(made[1]).toEqual(made[0]);
    expect(made[2]).toEqual(made[0]);
  });

  it("a dashboard form sent twice with its idempotency key makes one job, as the API does", async () => {
    const on = await surfaces();
    const key = crypto.randomUUID();
    const first = await on.dashboard(GOOD, key);
    expect(first).toHaveProperty("created");
    expect(await on.dashboard(GOOD, key)).toEqual(first);
    // A different submission under the same key is refused, as over REST.
    expect(await on.dashboard({ ...GOOD, video_type: "vlog" }, key)).toEqual({ code: "idempotency_key_reused" });
  });
});
