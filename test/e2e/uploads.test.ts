/**
 * Direct upload on the real local stack with tus-js-client (a stock tus
 * client): a 100 MB video sent in 20 MiB chunks through a proxy that cuts
 * the connection in the middle of the upload; the client resumes from the
 * offset the server reports, and a job made from the upload completes with
 * the file's name as its title. The upload is gone once the job has ended.
 */
import { createReadStream, statSync } from "node:fs";
import { connect } from "node:net";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Upload, type HttpRequest, type HttpResponse } from "tus-js-client";
import { AdminClient } from "../../scripts/lib/admin-client.ts";
import { ApiClient } from "../../scripts/local-stack/api-client.ts";
import { pollUntil } from "../../scripts/local-stack/poll.ts";
import { startCuttingProxy, type CuttingProxy } from "./harness/cutting-proxy.ts";
import { bigUploadSource } from "./harness/upload-media.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const MiB = 1024 * 1024;
const CHUNK = 20 * MiB;
/** In the middle of the second chunk. */
const CUT_AFTER_BYTES = 30 * MiB;
const JOB_TIMEOUT_MS = 200_000;

let stack: SharedStackInfo;
let proxy: CuttingProxy;
let sourcePath: string;

beforeAll(async () => {
  [stack, sourcePath] = await Promise.all([sharedStack(), bigUploadSource()]);
  proxy = await startCuttingProxy(stack.workerUrl, CUT_AFTER_BYTES);
}, 180_000);

afterAll(async () => {
  await proxy?.close();
});

interface Exchange {
  method: string;
  status: number;
  offset: number | null;
}

describe("tus-js-client upload, cut mid-way and resumed, then a job from it", { timeout: 400_000 }, () => {
  test("100 MB in 20 MiB chunks survives a dropped connection; the job completes; the upload is kept for edits and deleted with the job", async () => {
    const size = statSync(sourcePath).size;
    expect(size).toBeGreaterThan(100_000_000);
    const email = `e2e-upload-${Date.now()}-${randomBytes(4).toString("hex")}@example.test`;
    const account = await new AdminClient(stack.workerUrl, stack.adminToken).createAccount(email, "pro");
    const client = new ApiClient(stack.workerUrl, account.api_key);

    const exchanges: Exchange[] = [];
    const errorsSeen: string[] = [];
    let progressCalls = 0;
    const uploadUrl = await new Promise<string>((resolve, reject) => {
      const upload = new Upload(createReadStream(sourcePath), {
        endpoint: `${proxy.url}/api/v1/uploads`,
        chunkSize: CHUNK,
        retryDelays: [0, 500, 1000, 2000, 3000, 5000, 5000],
        headers: { Authorization: `Bearer ${account.api_key}` },
        metadata: { filename: "Quarterly all-hands.mkv", filetype: "video/x-matroska" },
        onProgress: () => {
          progressCalls += 1;
        },
        onShouldRetry: (err, attempt, options) => {
          errorsSeen.push(err.message);
          void attempt;
          void options;
          return true;
        },
        onAfterResponse: (req: HttpRequest, res: HttpResponse) => {
          const offset = res.getHeader("Upload-Offset");
          exchanges.push({ method: req.getMethod(), status: res.getStatus(), offset: offset ? Number(offset) : null });
        },
        onSuccess: () => resolve(upload.url ?? ""),
        onError: reject,
      });
      upload.start();
    });

    // The cut happened mid-upload, and the client carried on from the server's offset instead of starting over.
    expect(proxy.didCut()).toBe(true);
    expect(errorsSeen.length).toBeGreaterThanOrEqual(1);
    const heads = exchanges.filter((e) => e.method === "HEAD" && e.status === 200);
    expect(heads.length).toBeGreaterThanOrEqual(1);
    const resumedAt = heads.at(-1)!.offset!;
    expect(resumedAt).toBeGreaterThanOrEqual(CHUNK);
    expect(resumedAt).toBeLessThan(size);
    const patches = exchanges.filter((e) => e.method === "PATCH" && e.status === 204);
    expect(patches.at(-1)!.offset).toBe(size);
    // Stored offsets only grow: nothing was sent twice into the upload.
    const offsets = patches.map((p) => p.offset!);
    expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
    expect(progressCalls).toBeGreaterThan(0);

    const uploadId = /\/api\/v1\/uploads\/(upl_[A-Za-z0-9]+)$/.exec(uploadUrl)?.[1];
    expect(uploadId).toBeDefined();
    const described = await client.request("GET", `/api/v1/uploads/${uploadId}`);
    expect(described.status).toBe(200);
    expect(described.body).toMatchObject({ length: size, offset: size, status: "complete", file_name: "Quarterly all-hands.mkv" });

    const submitted = await client.request("POST", "/api/v1/jobs", { body: { upload_id: uploadId, video_type: "podcast" } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const jobId = (submitted.body as { job_id: string }).job_id;
    const job = await client.waitForJob(jobId, { timeoutMs: JOB_TIMEOUT_MS });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(job.title).toBe("Quarterly all-hands.mkv");
    expect(job.video_url).toBeNull();
    expect(job.upload_id).toBe(uploadId);
    expect((job.clips ?? []).length).toBeGreaterThanOrEqual(1);

    // A completed job keeps its source for clip edits (docs/editing.md), and it still belongs to that job:
    // it cannot make a second one.
    const again = await client.request("POST", "/api/v1/jobs", { body: { upload_id: uploadId, video_type: "podcast" } });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body).toMatchObject({ code: "upload_in_use" });
    // Deleting the job deletes its kept source with it.
    expect((await client.request("DELETE", `/api/v1/jobs/${jobId}`)).status).toBe(204);
    await pollUntil(
      async () => ((await client.request("GET", `/api/v1/uploads/${uploadId}`)).status === 404 ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 250, description: `upload ${uploadId} to be deleted with its job` },
    );
  });
});

/**
 * One kept-alive connection, as Node's HTTP agent (so tus-js-client and the CLI) uses it: each request is written
 * once the answer to the one before has arrived, and the result is what came back once every request was answered
 * or the Worker closed the connection, whichever came first. Neither within `budgetMs` (a budget for a stuck
 * connection, far above the milliseconds these answers take) fails.
 */
function onOneConnection(url: URL, requests: Buffer[], budgetMs: number): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const stuck = setTimeout(() => {
      socket.destroy();
      reject(new Error(`after ${budgetMs} ms the connection is neither answered nor closed; it holds:\n${text}`));
    }, budgetMs);
    socket.on("close", () => clearTimeout(stuck));
    let text = "";
    const statusLines = () => text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
    let sent = 0;
    const sendNext = () => socket.write(requests[sent++]!);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      // A status line per answer (an answer's body is short: the next status line comes in a later chunk or after it).
      if (statusLines() < sent) return;
      if (sent < requests.length) sendNext();
      else {
        socket.destroy();
        resolve({ text, closed: false });
      }
    });
    socket.on("close", () => resolve({ text, closed: true }));
    socket.on("error", reject);
    sendNext();
  });
}

describe("a refused PATCH", { timeout: 120_000 }, () => {
  test("is answered with its problem, and the connection stays usable: the next request on it is answered (or the connection is closed)", async () => {
    const email = `e2e-refused-${Date.now()}-${randomBytes(4).toString("hex")}@example.test`;
    const account = await new AdminClient(stack.workerUrl, stack.adminToken).createAccount(email, "pro");
    const headers = { Authorization: `Bearer ${account.api_key}`, "Tus-Resumable": "1.0.0" };
    const created = await fetch(`${stack.workerUrl}/api/v1/uploads`, { method: "POST", headers: { ...headers, "Upload-Length": String(4 * MiB) } });
    expect(created.status).toBe(201);
    const url = new URL(created.headers.get("Location")!, stack.workerUrl);
    const lines = (method: string, extra: string[]) =>
      [`${method} ${url.pathname} HTTP/1.1`, `Host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), ...extra, "", ""].join("\r\n");
    // A resume at the wrong offset with its 256 KiB body, then the HEAD a client sends next to find the offset.
    const body = randomBytes(256 * 1024);
    const patch = Buffer.concat([Buffer.from(lines("PATCH", ["Upload-Offset: 4096", "Content-Type: application/offset+octet-stream", `Content-Length: ${body.length}`])), body]);
    const head = Buffer.from(lines("HEAD", []));
    const { text, closed } = await onOneConnection(url, [patch, head], 30_000);
    expect(text).toMatch(/^HTTP\/1\.1 409 Conflict\r\n/);
    expect(text).toContain("upload_offset_mismatch");
    // A connection the runtime neither answers on nor closes would leave the client waiting (this waits for either).
    if (!closed) expect(text).toMatch(/HTTP\/1\.1 200 OK\r\n[\s\S]*Upload-Offset: 0\r\n/);
  });
});
