/**
 * Oversized bodies over real HTTP, through wrangler dev's proxy: every route
 * with a capped body answers its documented 413 problem+json, whether the body
 * declares its length or arrives chunked, and stores nothing; and the
 * connection still serves the client's next request (each test's checks go
 * over the same kept-alive connections). An answer sent while the rest of the
 * body was unread was replaced by the proxy's own 503 text/plain.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, test } from "vitest";
import { newAccount, type TestAccount } from "./harness/accounts.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

interface Answer {
  status: number;
  contentType: string;
  body: { code?: string; status?: number } | null;
  text: string;
}

/** The body as one buffer with Content-Length, or as a stream of 64 KiB chunks (Transfer-Encoding: chunked). */
function bodyOf(bytes: Uint8Array<ArrayBuffer>, chunked: boolean): { body: BodyInit; duplex?: "half" } {
  if (!chunked) return { body: bytes };
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + 64 * KiB));
      offset += 64 * KiB;
    },
  });
  return { body: stream, duplex: "half" };
}

async function send(url: string, method: string, headers: Record<string, string>, bytes: Uint8Array<ArrayBuffer>, chunked: boolean): Promise<Answer> {
  const response = await fetch(url, { method, headers, ...bodyOf(bytes, chunked) } as RequestInit);
  const text = await response.text();
  let body: Answer["body"] = null;
  try {
    body = JSON.parse(text) as Answer["body"];
  } catch {
    body = null;
  }
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", body, text: text.slice(0, 200) };
}

function expectProblem(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, contentType: answer.contentType, code: answer.body?.code }, answer.text).toEqual({
    status,
    contentType: "application/problem+json",
    code,
  });
}

/** A JSON text of `size` bytes: valid JSON, so only its size is wrong. */
function jsonOf(size: number): Uint8Array<ArrayBuffer> {
  const prefix = '{"video_url":"https://example.com/a.mp4","video_type":"podcast","padding":"';
  return new TextEncoder().encode(prefix + "x".repeat(size - prefix.length - 2) + '"}');
}

/** Bytes that start as a PNG (signature and IHDR) and run on to `size`. */
function pngOf(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  return bytes;
}

let stack: SharedStackInfo;
let account: TestAccount;
let auth: Record<string, string>;

beforeAll(async () => {
  stack = await sharedStack();
  account = await newAccount(stack);
  auth = { Authorization: `Bearer ${account.apiKey}` };
}, 180_000);

describe.each([
  ["with Content-Length", false],
  ["chunked", true],
])("an oversized body %s", { timeout: 120_000 }, (_label, chunked) => {
  test("POST /api/v1/jobs, PUT /api/v1/configs/:name, POST /api/v1/webhooks: 413 payload_too_large, nothing stored", async () => {
    const json = { ...auth, "Content-Type": "application/json" };
    expectProblem(await send(`${stack.workerUrl}/api/v1/jobs`, "POST", json, jsonOf(40 * KiB), chunked), 413, "payload_too_large");
    expectProblem(await send(`${stack.workerUrl}/api/v1/configs/huge`, "PUT", json, jsonOf(1 * MiB), chunked), 413, "payload_too_large");
    expectProblem(await send(`${stack.workerUrl}/api/v1/webhooks`, "POST", json, jsonOf(5 * MiB), chunked), 413, "payload_too_large");
    const jobs = await account.client.request("GET", "/api/v1/jobs");
    expect((jobs.body as { jobs: unknown[] }).jobs).toEqual([]);
    expect((await account.client.request("GET", "/api/v1/configs/huge")).status).toBe(404);
    const hooks = await account.client.request("GET", "/api/v1/webhooks");
    expect((hooks.body as { webhooks: unknown[] }).webhooks).toEqual([]);
  });

  test("PUT /api/v1/logo of 2 MB and 5.5 MB: 413 logo_too_large, no logo", async () => {
    for (const size of [2_000_000, 5_500_000]) {
      expectProblem(await send(`${stack.workerUrl}/api/v1/logo`, "PUT", { ...auth, "Content-Type": "image/png" }, pngOf(size), chunked), 413, "logo_too_large");
    }
    expect((await account.client.request("GET", "/api/v1/logo")).status).toBe(404);
  });

  test("POST /admin/v1/accounts: 413 payload_too_large, no account", async () => {
    const email = `e2e-oversized-${randomBytes(6).toString("hex")}@example.test`;
    const body = new TextEncoder().encode(JSON.stringify({ email, plan: "pro", padding: "x".repeat(40 * KiB) }));
    const headers = { Authorization: `Bearer ${stack.adminToken}`, "Content-Type": "application/json" };
    expectProblem(await send(`${stack.workerUrl}/admin/v1/accounts`, "POST", headers, body, chunked), 413, "payload_too_large");
    // The address is still free: the refused request created nothing.
    const created = await fetch(`${stack.workerUrl}/admin/v1/accounts`, { method: "POST", headers, body: JSON.stringify({ email, plan: "pro" }) });
    expect(created.status).toBe(201);
  });

  test("POST /mcp over 64 KiB: 413 payload_too_large", async () => {
    const message = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_usage", arguments: { padding: "x".repeat(100 * KiB) } } };
    const headers = { ...auth, "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    expectProblem(await send(`${stack.workerUrl}/mcp`, "POST", headers, new TextEncoder().encode(JSON.stringify(message)), chunked), 413, "payload_too_large");
  });

  test("dashboard forms: the sign-in form over 16 KiB is 413 payload_too_large, the logo form over 1 MiB 413 logo_too_large", async () => {
    const form = { "Content-Type": "application/x-www-form-urlencoded", Origin: stack.workerUrl };
    const fields = new TextEncoder().encode(`email=a%40example.test&password=${"x".repeat(40 * KiB)}`);
    expectProblem(await send(`${stack.workerUrl}/dashboard/login`, "POST", form, fields, chunked), 413, "payload_too_large");
    const multipart = { "Content-Type": "multipart/form-data; boundary=b", Origin: stack.workerUrl };
    expectProblem(await send(`${stack.workerUrl}/dashboard/logo`, "POST", multipart, pngOf(2_000_000), chunked), 413, "logo_too_large");
  });

  test("tus PATCH past the upload's length: 413 upload_length_exceeded, offset stays 0", async () => {
    const created = await fetch(`${stack.workerUrl}/api/v1/uploads`, {
      method: "POST",
      headers: { ...auth, "Tus-Resumable": "1.0.0", "Upload-Length": "1000" },
    });
    expect(created.status).toBe(201);
    const uploadUrl = `${stack.workerUrl}${created.headers.get("Location")}`;
    const patch = { ...auth, "Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream" };
    expectProblem(await send(uploadUrl, "PATCH", patch, new Uint8Array(3 * MiB), chunked), 413, "upload_length_exceeded");
    const head = await fetch(uploadUrl, { method: "HEAD", headers: { ...auth, "Tus-Resumable": "1.0.0" } });
    expect(head.headers.get("Upload-Offset")).toBe("0");
  });

  test("the engine channel answers its own problem (401 without a job's token), not the proxy's 503", async () => {
    const answer = await send(`${stack.workerUrl}/internal/v1/jobs/job_unknown/complete`, "POST", { "Content-Type": "application/json" }, jsonOf(3 * MiB), chunked);
    expectProblem(answer, 401, "unauthorized");
  });
});
