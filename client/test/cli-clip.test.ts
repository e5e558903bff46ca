/**
 * `clipjobs clip edit|add`: the requests they send (the clip routes with the
 * edit's body), what they print, --wait polling the clip until its edit is
 * done or failed, and the problems they report, against a real HTTP server on
 * loopback that answers as the Worker does.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { main, type Io } from "../src/cli.ts";

const JOB = `job_${"c".repeat(21)}`;

interface Seen {
  method: string;
  path: string;
  body: unknown;
}

let server: Server;
let url = "";
const requests: Seen[] = [];
/** What GET of clip 0 answers next (the edit's states in order, the last one repeated). */
let clipStates: (Record<string, unknown> | null)[] = [];

function clipAnswer(index: number, version: number, edit: Record<string, unknown> | null, extra: Record<string, unknown> = {}) {
  return {
    index,
    version,
    url: version > 0 ? `https://cdn.example.com/c/v${version}/clip.mp4` : null,
    thumbnail_url: null,
    start_seconds: 0,
    end_seconds: 19.5,
    duration_seconds: 19.5,
    title: "Why clips matter",
    edit,
    words: [{ index: 0, text: "Why", start_seconds: 1, end_seconds: 1.3 }],
    ...extra,
  };
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : null;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const body = await bodyOf(req);
      requests.push({ method: req.method ?? "", path, body });
      const json = (status: number, value: unknown, type = "application/json") => {
        res.writeHead(status, { "Content-Type": type });
        res.end(JSON.stringify(value));
      };
      if (req.method === "PATCH" && path === `/api/v1/jobs/${JOB}/clips/1`) {
        return json(409, { type: "/docs/errors#clip_edit_in_progress", title: "Clip edit in progress", status: 409, code: "clip_edit_in_progress", detail: "Clip 1 has an edit queued or rendering." }, "application/problem+json");
      }
      if (req.method === "PATCH" && path === `/api/v1/jobs/${JOB}/clips/0`) return json(202, clipAnswer(0, 1, { status: "queued", requested: body }));
      if (req.method === "GET" && path === `/api/v1/jobs/${JOB}/clips/0`) {
        const state = clipStates.length > 1 ? clipStates.shift()! : (clipStates[0] ?? null);
        return json(200, state === null ? clipAnswer(0, 2, null) : clipAnswer(0, 1, state));
      }
      if (req.method === "POST" && path === `/api/v1/jobs/${JOB}/clips`) return json(202, clipAnswer(2, 0, { status: "queued", requested: body }, { start_seconds: 20, end_seconds: 40 }));
      json(404, { type: "/docs/errors#not_found", title: "Not found", status: 404, code: "not_found", detail: "No such route." }, "application/problem+json");
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  requests.length = 0;
  clipStates = [];
});

function io(): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t), interactive: false, env: { CLIPJOBS_URL: url, CLIPJOBS_API_KEY: "ck_live_test" } };
}

describe("clipjobs clip edit", () => {
  it("sends the span, the word corrections and the title, and prints the accepted clip", async () => {
    const out = io();
    expect(await main(["clip", "edit", JOB, "0", "--start", "0", "--end", "0:19.5", "--word", "2=shorts", "--word", "5=viewers = people", "--title", "New"], out)).toBe(0);
    expect(requests).toEqual([
      {
        method: "PATCH",
        path: `/api/v1/jobs/${JOB}/clips/0`,
        body: { start_seconds: 0, end_seconds: 19.5, words: [{ index: 2, text: "shorts" }, { index: 5, text: "viewers = people" }], title: "New" },
      },
    ]);
    expect(out.out.join("")).toBe(`clip 0  version 1  edit queued\n  0:00.0-0:19.5  Why clips matter\n  https://cdn.example.com/c/v1/clip.mp4\n`);
  });

  it("with --wait, reads the clip until its new version is published", async () => {
    clipStates = [{ status: "queued", requested: {} }, { status: "rendering", requested: {} }, null];
    const out = io();
    expect(await main(["clip", "edit", JOB, "0", "--title", "New", "--wait", "--json"], out)).toBe(0);
    expect(requests.map((r) => r.method)).toEqual(["PATCH", "GET", "GET", "GET"]);
    expect(JSON.parse(out.out.join(""))).toMatchObject({ index: 0, version: 2, edit: null });
  });

  it("with --wait, exits 1 when the edit failed", async () => {
    clipStates = [{ status: "failed", requested: {}, error: { code: "internal_error", message: "ffmpeg exited with 1" } }];
    const out = io();
    expect(await main(["clip", "edit", JOB, "0", "--end", "30", "--wait"], out)).toBe(1);
    expect(out.out.join("")).toContain("edit failed: internal_error: ffmpeg exited with 1");
  });

  it("refuses a call that changes nothing or is malformed before asking the API", async () => {
    for (const [args, message] of [
      [["clip", "edit", JOB, "0"], "give at least one of"],
      [["clip", "edit", JOB, "x", "--title", "A"], "a clip index"],
      [["clip", "edit", JOB, "0", "--word", "shorts"], "--word takes N=TEXT"],
      [["clip", "edit", JOB, "0", "--end", "1:75"], "--end takes seconds"],
      [["clip", "add", JOB, "--from", "20"], "add needs --from and --to"],
      [["clip", "trim", JOB], "expected clip edit or clip add"],
    ] as const) {
      const out = io();
      expect(await main([...args], out)).toBe(2);
      expect(out.err.join("")).toContain(message);
    }
    expect(requests).toHaveLength(0);
  });

  it("reports the API's problem with exit status 1", async () => {
    const out = io();
    expect(await main(["clip", "edit", JOB, "1", "--title", "A"], out)).toBe(1);
    expect(out.err.join("")).toBe("error: clip_edit_in_progress: Clip 1 has an edit queued or rendering.\n");
  });
});

describe("clipjobs clip add", () => {
  it("sends the span with --snap and prints the new clip, queued at version 0", async () => {
    const out = io();
    expect(await main(["clip", "add", JOB, "--from", "20", "--to", "0:40", "--snap", "--title", "Mine"], out)).toBe(0);
    expect(requests).toEqual([{ method: "POST", path: `/api/v1/jobs/${JOB}/clips`, body: { start_seconds: 20, end_seconds: 40, snap: true, title: "Mine" } }]);
    expect(out.out.join("")).toBe(`clip 2  version 0  edit queued\n  0:20.0-0:40.0  Why clips matter\n`);
  });
});
