/**
 * The engine's read of an upload job's source from the Worker's job channel
 * (a local HTTP server plays the Worker's GET .../source): the token is sent,
 * a connection dropped mid-body resumes with Range and yields the exact
 * bytes, and the size cap, refusals and stalls fail with SPEC codes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { JobFailure } from "../../src/shared/errors.ts";
import { fileNameFromDisposition, readUploadedSource } from "../../src/source/upload.ts";

const TOKEN = "job-token-0123456789abcdef";
const DATA = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7 + 3) & 0xff));

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server;
let base = "";
let handler: Handler;
const seen: { range: string | undefined; authorization: string | undefined }[] = [];
const dir = mkdtempSync(join(tmpdir(), "upload-source-"));

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ range: req.headers.range, authorization: req.headers.authorization });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  seen.length = 0;
});

/** Serves DATA like the Worker's source route (200, or 206 for `bytes=N-`). */
function serve(req: IncomingMessage, res: ServerResponse, cutAt?: number): void {
  const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
  const start = match ? Number(match[1]) : 0;
  const body = DATA.subarray(start);
  res.writeHead(match ? 206 : 200, {
    "Content-Length": String(body.length),
    "Content-Disposition": "attachment; filename*=UTF-8''Caf%C3%A9%20talk.mp4",
    ...(match ? { "Content-Range": `bytes ${start}-${DATA.length - 1}/${DATA.length}` } : {}),
  });
  if (cutAt === undefined) {
    res.end(body);
    return;
  }
  // The first part reaches the engine's disk, then the connection drops.
  res.write(body.subarray(0, cutAt), () => setTimeout(() => res.destroy(), 300));
}

function read(overrides: Partial<Parameters<typeof readUploadedSource>[0]> = {}) {
  const destPath = join(dir, `source-${Math.random().toString(36).slice(2)}.video`);
  return {
    destPath,
    result: readUploadedSource({
      url: `${base}/internal/v1/jobs/job_x/source`,
      token: TOKEN,
      destPath,
      maxBytes: 10_000_000,
      tooLargeMessage: "too large",
      timeoutMs: 20_000,
      stallTimeoutMs: 5_000,
      signal: new AbortController().signal,
      onProgress: () => undefined,
      ...overrides,
    }),
  };
}

describe("readUploadedSource", () => {
  it("reads the whole file with the job token, and names it from Content-Disposition", async () => {
    handler = (req, res) => serve(req, res);
    const { destPath, result } = read();
    await expect(result).resolves.toEqual({ bytes: DATA.length, fileName: "Café talk.mp4" });
    expect(readFileSync(destPath).equals(DATA)).toBe(true);
    expect(seen[0]?.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("resumes a body cut mid-way with a Range request: the file is exact", async () => {
    let calls = 0;
    handler = (req, res) => {
      calls += 1;
      serve(req, res, calls === 1 ? 120_000 : undefined);
    };
    const progress: number[] = [];
    const { destPath, result } = read({ onProgress: (f) => progress.push(f) });
    const { bytes } = await result;
    expect(bytes).toBe(DATA.length);
    expect(readFileSync(destPath).equals(DATA)).toBe(true);
    expect(seen.map((s) => s.range)).toEqual([undefined, `bytes=${seen[1]?.range?.slice(6, -1)}-`]);
    expect(Number(seen[1]?.range?.slice(6, -1))).toBeGreaterThan(0);
    expect(progress.at(-1)).toBe(1);
  });

  it("fails with source_too_large over the cap, and source_unreachable on a refusal or a stall", async () => {
    handler = (req, res) => serve(req, res);
    await expect(read({ maxBytes: 1000 }).result).rejects.toMatchObject({ code: "source_too_large", message: "too large" });

    seen.length = 0;
    handler = (_req, res) => {
      res.writeHead(409, { "Content-Type": "application/problem+json" });
      res.end("{}");
    };
    const refused = read().result;
    await expect(refused).rejects.toBeInstanceOf(JobFailure);
    await expect(refused).rejects.toMatchObject({ code: "source_unreachable" });
    expect(seen).toHaveLength(1); // a refusal is not retried

    handler = (_req, res) => {
      res.writeHead(200, { "Content-Length": String(DATA.length) });
      res.write(DATA.subarray(0, 1000)); // then nothing
    };
    await expect(read({ stallTimeoutMs: 300, attempts: 1 }).result).rejects.toMatchObject({ code: "source_unreachable" });
  });

  it("parses RFC 6266 filename*", () => {
    expect(fileNameFromDisposition("attachment; filename*=UTF-8''a%20b.mkv")).toBe("a b.mkv");
    expect(fileNameFromDisposition("attachment")).toBeNull();
    expect(fileNameFromDisposition(null)).toBeNull();
  });
});
