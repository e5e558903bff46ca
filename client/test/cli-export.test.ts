/**
 * `clipjobs export`: the request it sends (the job's export route with the
 * format), the file it prints or writes, and the problems it reports, against
 * a real HTTP server on loopback that answers as the Worker does.
 */
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main, type Io } from "../src/cli.ts";

const EDL = "TITLE: Talk\r\nFCM: NON-DROP FRAME\r\n\r\n001  KEYNOTE  AA/V  C        00:00:10:00 00:00:20:00 01:00:00:00 01:00:10:00\r\n";
const JOB = `job_${"b".repeat(21)}`;

let server: Server;
let url = "";
const requests: string[] = [];
let dir = "";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "clipjobs-cli-export-"));
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const target = new URL(req.url ?? "/", "http://x");
    if (target.pathname === `/api/v1/jobs/${JOB}/export` && target.searchParams.get("format") === "edl") {
      res.writeHead(200, { "Content-Type": "text/plain; charset=us-ascii", "Content-Disposition": `attachment; filename="${JOB}.edl"` });
      res.end(EDL);
      return;
    }
    res.writeHead(409, { "Content-Type": "application/problem+json" });
    res.end(JSON.stringify({ type: "about:blank", title: "Job not completed", status: 409, code: "job_not_completed", detail: "Job job_x is processing; only a completed job's clips can be exported." }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

function io(): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t), interactive: false, env: { CLIPJOBS_URL: url, CLIPJOBS_API_KEY: "ck_live_test" } };
}

describe("clipjobs export", () => {
  it("prints the file the API answers", async () => {
    const out = io();
    expect(await main(["export", JOB, "--format", "edl"], out)).toBe(0);
    expect(requests.at(-1)).toBe(`/api/v1/jobs/${JOB}/export?format=edl`);
    expect(out.out.join("")).toBe(EDL);
  });

  it("writes it to --output and prints the path", async () => {
    const out = io();
    const file = join(dir, "cut.edl");
    expect(await main(["export", JOB, "--format", "edl", "-o", file], out)).toBe(0);
    expect(await readFile(file, "utf8")).toBe(EDL);
    expect(out.out.join("")).toBe(`${file}\n`);
  });

  it("refuses a missing or unknown format before asking the API", async () => {
    const before = requests.length;
    for (const args of [["export", JOB], ["export", JOB, "--format", "aaf"]]) {
      const out = io();
      expect(await main(args, out)).toBe(2);
      expect(out.err.join("")).toContain("--format must be fcpxml, edl, otio or mlt");
    }
    expect(requests.length).toBe(before);
  });

  it("reports the API's problem with exit status 1", async () => {
    const out = io();
    expect(await main(["export", JOB, "--format", "otio"], out)).toBe(1);
    expect(out.err.join("")).toBe("error: job_not_completed: Job job_x is processing; only a completed job's clips can be exported.\n");
  });
});
