/**
 * The remote MCP server on the real local stack (Worker under wrangler dev,
 * the real engine with ffmpeg), driven by the MCP SDK's own client over
 * Streamable HTTP, as an assistant's host would drive it: list the tools,
 * submit a real job, poll it to completion, read its clips (the files are
 * fetched from {cdn_url}) and its transcript (from an SRT given as
 * captions_url, so its sentences and times are known), and the clean tool
 * errors of a bad key, a malformed argument and an unknown job.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { AdminClient } from "../../scripts/lib/admin-client.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { toSrt } from "./harness/captions.ts";
import { answerText as text, callTool as call, ok, problem, TOOL_NAMES } from "./harness/mcp-answers.ts";
import { TALK_20S, talkSource } from "./harness/media.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const JOB_TIMEOUT_MS = 200_000;

/** What is said in the talk, as the captions file tells the engine (times in seconds). */
const SENTENCES = [
  { start: 1, end: 3.5, text: "Welcome to the show about short clips." },
  { start: 4, end: 7.2, text: "Today we talk about what makes a moment worth sharing." },
  { start: 8, end: 11.5, text: "The answer is a clear start and a strong finish." },
  { start: 12.5, end: 16, text: "Thanks for listening, and see you next week." },
];

const SRT = toSrt(SENTENCES);

let stack: SharedStackInfo;
let sources: SourceServer;
let talkUrl: string;
let captionsUrl: string;
let apiKey: string;
const clients: Client[] = [];

async function connect(key: string | null, mode: "auto" | "legacy"): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.workerUrl}/mcp`), {
    requestInit: key === null ? {} : { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: "clipjobs-e2e", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  const [info, server, talk] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_20S)]);
  stack = info;
  sources = server;
  talkUrl = sources.addFile("mcp-talk.mp4", talk.path);
  captionsUrl = sources.addText("mcp-talk.srt", SRT, "application/x-subrip");
  const email = `mcp-${Date.now()}-${randomBytes(4).toString("hex")}@example.test`;
  apiKey = (await new AdminClient(stack.workerUrl, stack.adminToken).createAccount(email, "pro")).api_key;
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await sources?.close();
});

describe("MCP over Streamable HTTP with the SDK's client", { timeout: 300_000 }, () => {
  test("lists the tools, runs a real job to completion, reads its clips and its transcript", async () => {
    const client = await connect(apiKey, "auto");
    // The client's own negotiation picks the current revision, and the server says how to use it.
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(client.getServerVersion()).toMatchObject({ name: "clipjobs" });
    expect(client.getInstructions()).toContain("submit_job");
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);

    ok(await call(client, "save_config", { name: "one-short", config: { resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 } }));
    const submitted = ok(
      await call(client, "submit_job", { video_url: talkUrl, video_type: "podcast", config_name: "one-short", captions_url: captionsUrl }),
    );
    const jobId = submitted.job_id as string;
    expect(submitted.status).toBe("queued");

    // Poll as a model is told to, until the job ends; progress never goes back.
    const deadline = Date.now() + JOB_TIMEOUT_MS;
    const progress: number[] = [];
    let job = ok(await call(client, "get_job", { job_id: jobId }));
    while (job.status === "queued" || job.status === "processing") {
      progress.push(job.progress as number);
      expect(typeof job.step).toBe("string");
      if (Date.now() > deadline) throw new Error(`job still ${String(job.status)} after ${JOB_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      job = ok(await call(client, "get_job", { job_id: jobId }));
    }
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);

    const clips = job.clips as { url: string; title: string | null; text: string | null; start_seconds: number; end_seconds: number }[];
    expect(clips).toHaveLength(1);
    const [clip] = clips;
    expect(clip!.text?.length).toBeGreaterThan(0);
    expect(clip!.title?.length).toBeGreaterThan(0);
    // The clip's words are the captions' words of its span.
    expect(SENTENCES.map((s) => s.text).join(" ")).toContain(clip!.text!);
    const file = await fetch(clip!.url);
    expect(file.status).toBe(200);
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(new TextDecoder().decode(bytes.subarray(4, 8))).toBe("ftyp");

    const transcript = await call(client, "get_transcript", { job_id: jobId });
    const lines = text(transcript).split("\n");
    expect(lines[0]).toMatch(new RegExp(`^Transcript of ${jobId} \\(language: \\w+, source: captions_url\\)$`));
    expect(lines.slice(1)).toEqual([
      "[0:01.0-0:03.5] Welcome to the show about short clips.",
      "[0:04.0-0:07.2] Today we talk about what makes a moment worth sharing.",
      "[0:08.0-0:11.5] The answer is a clear start and a strong finish.",
      "[0:12.5-0:16.0] Thanks for listening, and see you next week.",
    ]);
    const part = ok(await call(client, "get_transcript", { job_id: jobId, from_seconds: 7.5, to_seconds: 12 }));
    expect((part.sentences as { text: string }[]).map((s) => s.text)).toEqual([SENTENCES[2]!.text]);

    const listed = ok(await call(client, "list_jobs", { status: "completed" }));
    expect(listed.jobs).toEqual([expect.objectContaining({ job_id: jobId, clips_count: 1 })]);
    expect(ok(await call(client, "get_usage")).credits_used).toBeGreaterThan(0);
  });

  test("a bad key, a malformed argument and an unknown job each give a clean tool error (2025 handshake too)", async () => {
    for (const mode of ["auto", "legacy"] as const) {
      const stranger = await connect("ck_live_this_key_does_not_exist_0000", mode);
      expect((await stranger.listTools()).tools).toHaveLength(TOOL_NAMES.length);
      problem(await call(stranger, "list_jobs"), "unauthorized");

      const client = await connect(apiKey, mode);
      expect(client.getNegotiatedProtocolVersion()).toBe(mode === "auto" ? "2026-07-28" : "2025-11-25");
      const malformed = problem(await call(client, "submit_job", { video_url: talkUrl, video_type: "podcast", max_clips: 3 }), "invalid_request");
      expect(malformed.errors).toEqual([expect.objectContaining({ path: "(arguments)" })]);
      expect(malformed.errors![0]!.message).toContain("max_clips");

      const unknown = problem(await call(client, "get_job", { job_id: "job_0000000000000000000000" }), "not_found");
      expect(unknown.detail).toBe("No job job_0000000000000000000000.");
      problem(await call(client, "get_transcript", { job_id: "job_0000000000000000000000" }), "not_found");
    }
  });
});
