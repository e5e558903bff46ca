/**
 * The CLI's steering flags become the submission's fields: a real
 * HTTP server on loopback records what `clipjobs submit` sends.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main, type Io } from "../src/cli.ts";
import { seconds } from "../src/format.ts";

let server: Server;
let url = "";
const bodies: unknown[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    bodies.push(JSON.parse(await readBody(req)));
    res.writeHead(201, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ job_id: `job_${"a".repeat(20)}`, status: "queued", message: "queued" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function io(): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t), interactive: false, env: { CLIPJOBS_URL: url, CLIPJOBS_API_KEY: "ck_live_test" } };
}

describe("clipjobs submit steering flags", () => {
  it("sends prompt, time_range, remove_silence and remove_fillers", async () => {
    const args = ["submit", "https://example.com/call.mp4", "--type", "podcast", "--prompt", "the parts about pricing", "--from", "10:00", "--to", "1:00:00", "--remove-silence", "tight", "--remove-fillers"];
    expect(await main(args, io())).toBe(0);
    expect(bodies.at(-1)).toEqual({
      video_url: "https://example.com/call.mp4",
      video_type: "podcast",
      prompt: "the parts about pricing",
      time_range: { start_seconds: 600, end_seconds: 3600 },
      remove_silence: "tight",
      remove_fillers: true,
    });
  });

  it("leaves out what is not given, so the configuration's values apply", async () => {
    expect(await main(["submit", "https://example.com/a.mp4", "--type", "vlog", "--keep-fillers", "--to", "90"], io())).toBe(0);
    expect(bodies.at(-1)).toEqual({ video_url: "https://example.com/a.mp4", video_type: "vlog", remove_fillers: false, time_range: { start_seconds: 0, end_seconds: 90 } });
  });

  it("refuses flags it cannot read as a usage mistake, sending nothing", async () => {
    const sent = bodies.length;
    for (const args of [["--from", "10"], ["--to", "ten"], ["--remove-fillers", "--keep-fillers"]]) {
      const out = io();
      expect(await main(["submit", "https://example.com/a.mp4", "--type", "vlog", ...args], out)).toBe(2);
    }
    expect(bodies.length).toBe(sent);
  });

  it("reads clock times", () => {
    expect(seconds("75.5")).toBe(75.5);
    expect(seconds("1:15")).toBe(75);
    expect(seconds("2:00:30")).toBe(7230);
    expect(seconds("1:75")).toBeNull();
    expect(seconds("1.5:00")).toBeNull();
    expect(seconds("")).toBeNull();
  });
});

describe("clipjobs submit language flags", () => {
  it("sends language and caption_language as given", async () => {
    expect(await main(["submit", "https://example.com/talk.mp4", "--type", "lecture", "--language", "de", "--caption-language", "ja"], io())).toBe(0);
    expect(bodies.at(-1)).toEqual({ video_url: "https://example.com/talk.mp4", video_type: "lecture", language: "de", caption_language: "ja" });
  });

  it("auto and spoken send null, overriding a configuration's languages", async () => {
    expect(await main(["submit", "https://example.com/talk.mp4", "--type", "lecture", "--config", "dubbed", "--language", "auto", "--caption-language", "spoken"], io())).toBe(0);
    expect(bodies.at(-1)).toEqual({ video_url: "https://example.com/talk.mp4", video_type: "lecture", config_name: "dubbed", language: null, caption_language: null });
  });

  it("leaves both out when not given, so the configuration's apply", async () => {
    expect(await main(["submit", "https://example.com/talk.mp4", "--type", "lecture", "--caption-language", "fr"], io())).toBe(0);
    expect(bodies.at(-1)).toEqual({ video_url: "https://example.com/talk.mp4", video_type: "lecture", caption_language: "fr" });
    expect(bodies.at(-1)).not.toHaveProperty("language");
  });
});
