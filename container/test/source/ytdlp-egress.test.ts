import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicOnlyPolicy, systemResolver, type AddressPolicy, type Resolver } from "../../src/source/address-policy.ts";
import { PLATFORMS } from "../../src/source/platforms.ts";
import { downloadWithYtdlp, type YtdlpDownloadRequest } from "../../src/source/ytdlp.ts";
import { failureOf } from "../helpers/failure.ts";
import { osTempDir, removeTempDirs } from "../helpers/media.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

/**
 * yt-dlp's traffic, size and processes, with a stand-in yt-dlp (a Node script:
 * yt-dlp is not installed here and there is no internet). Like the real one it
 * reads --proxy and --paths, talks HTTP through the proxy it was given, and
 * starts a child process that does the writing (as yt-dlp starts its ffmpeg
 * merger). The servers are real local servers.
 */
const platform = PLATFORMS.find((p) => p.name === "Vimeo")!;

/** A stand-in yt-dlp running `body` with `args`, `after(flag)`, `proxy` (URL), `work` and `dir` in scope. */
async function standIn(dir: string, body: string): Promise<string> {
  const script = path.join(dir, "yt-dlp");
  const prelude = [
    `#!${process.execPath}`,
    `const fs = require("node:fs"), http = require("node:http"), cp = require("node:child_process");`,
    `const args = process.argv.slice(2);`,
    `const after = (flag) => args[args.indexOf(flag) + 1];`,
    `const proxy = new URL(after("--proxy"));`,
    `const work = after("--paths");`,
    `const dir = ${JSON.stringify(dir)};`,
    `fs.writeFileSync(dir + "/env.json", JSON.stringify({ https_proxy: process.env.https_proxy, http_proxy: process.env.http_proxy }));`,
  ];
  await writeFile(script, `${prelude.join("\n")}\n${body}\n`);
  await chmod(script, 0o755);
  return script;
}

/** A child that GETs `target` (absolute-form, through the proxy) into `file`, started detached from nothing: it is in yt-dlp's group. */
function childWriter(target: string, file: string): string {
  const code = [
    `const http = require("node:http"), fs = require("node:fs");`,
    `const proxy = new URL(process.env.http_proxy);`,
    `http.get({ host: proxy.hostname, port: proxy.port, path: ${JSON.stringify(target)} }, (res) => res.pipe(fs.createWriteStream(${JSON.stringify(file)})));`,
  ].join(" ");
  return [
    `const child = cp.spawn(process.execPath, ["-e", ${JSON.stringify(code)}], { stdio: "ignore" });`,
    `fs.writeFileSync(dir + "/child.pid", String(child.pid));`,
    `child.on("exit", (code) => process.exit(code ?? 1));`,
  ].join("\n");
}

/** A child that keeps appending to `file` on its own, with no connection to lose (as ffmpeg merging fragments). */
function childMerger(file: string): string {
  const code = `const fs = require("node:fs"); const b = Buffer.alloc(4096, 1); setInterval(() => fs.appendFileSync(${JSON.stringify(file)}, b), 20);`;
  return [
    `const child = cp.spawn(process.execPath, ["-e", ${JSON.stringify(code)}], { stdio: "ignore" });`,
    `fs.writeFileSync(dir + "/child.pid", String(child.pid));`,
    `child.on("exit", (code) => process.exit(code ?? 1));`,
  ].join("\n");
}

/** Alive and not a zombie (a killed grandchild may wait for a reaper). */
async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

let jobCounter = 0;
async function job(script: (dir: string, work: string) => Promise<string>, overrides: Partial<YtdlpDownloadRequest> = {}) {
  jobCounter += 1;
  const dir = await osTempDir(`ytdlp-egress-${jobCounter}`);
  const work = path.join(dir, "work");
  await mkdir(work);
  const request: YtdlpDownloadRequest = {
    ytdlpPath: await script(dir, work),
    url: new URL("https://vimeo.com/123"),
    platform,
    workDir: work,
    maxBytes: 1024 * 1024,
    tooLargeMessage: "The video is larger than the limit.",
    maxSeconds: 600,
    timeoutMs: 20_000,
    signal: new AbortController().signal,
    policy: publicOnlyPolicy,
    resolver: systemResolver,
    ...overrides,
  };
  return { dir, work, request };
}

const onlyPorts =
  (...ports: number[]): AddressPolicy =>
  (target) =>
    ports.includes(target.port) ? null : publicOnlyPolicy(target);

let victim: RecordingServer;
/** An endless body without Content-Length (chunked). */
let source: http.Server;
let sourcePort = 0;
let openSourceSockets = 0;

beforeAll(async () => {
  victim = await startRecordingServer((_req, res) => res.end("metadata secret"), "::");
  const chunk = Buffer.alloc(64 * 1024, 3);
  source = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "video/mp4" });
    const pump = () => {
      while (res.write(chunk)) {
        /* keep the socket buffer full */
      }
    };
    res.on("drain", pump);
    pump();
  });
  source.on("connection", (socket) => {
    openSourceSockets += 1;
    socket.on("close", () => {
      openSourceSockets -= 1;
    });
  });
  await new Promise<void>((resolve) => source.listen(0, "127.0.0.1", resolve));
  sourcePort = (source.address() as AddressInfo).port;
});

afterAll(async () => {
  await victim.close();
  source.closeAllConnections();
  await new Promise<void>((resolve) => source.close(() => resolve()));
  await removeTempDirs();
});

describe("yt-dlp's connections go through the engine's egress proxy", () => {
  it("refuses private targets by CONNECT and by plain http, also behind a public-looking name, without connecting", async () => {
    const toLoopback: Resolver = async (hostname) =>
      hostname === "videos.evil.example" ? [{ address: "127.0.0.1", family: 4 }] : systemResolver(hostname);
    const targets = [`127.0.0.1:${victim.port}`, `[::1]:${victim.port}`, `videos.evil.example:${victim.port}`, `169.254.169.254:80`];
    const { dir, request } = await job(
      (d) =>
        standIn(
          d,
          [
            `const targets = ${JSON.stringify(targets)};`,
            `const statuses = [];`,
            `function connect(i) {`,
            `  if (i === targets.length) return get(0);`,
            `  const req = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: targets[i] });`,
            `  req.on("connect", (res, socket) => { statuses.push("CONNECT " + res.statusCode); socket.destroy(); connect(i + 1); });`,
            `  req.on("error", (e) => { statuses.push("CONNECT error " + e.message); connect(i + 1); });`,
            `  req.end();`,
            `}`,
            `function get(i) {`,
            `  if (i === targets.length) { fs.writeFileSync(dir + "/statuses.json", JSON.stringify(statuses)); console.error("ERROR: Unable to download webpage: HTTP Error 403: Forbidden"); process.exit(1); }`,
            `  http.get({ host: proxy.hostname, port: proxy.port, path: "http://" + targets[i] + "/latest/meta-data/" }, (res) => { statuses.push("GET " + res.statusCode); res.resume(); res.on("end", () => get(i + 1)); })`,
            `    .on("error", (e) => { statuses.push("GET error " + e.message); get(i + 1); });`,
            `}`,
            `connect(0);`,
          ].join("\n"),
        ),
      { resolver: toLoopback },
    );
    const failure = await failureOf(downloadWithYtdlp(request));
    expect(failure.code).toBe("source_unreachable");
    expect(failure.message).toMatch(/private, loopback or otherwise non-public address/);
    const statuses = JSON.parse(await readFile(path.join(dir, "statuses.json"), "utf8")) as string[];
    expect(statuses).toEqual([...targets.map(() => "CONNECT 403"), ...targets.map(() => "GET 403")]);
    expect(victim.connections).toBe(0);
    // The programs yt-dlp starts get the proxy too.
    const env = JSON.parse(await readFile(path.join(dir, "env.json"), "utf8")) as Record<string, string>;
    expect(env.https_proxy).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(env.http_proxy).toBe(env.https_proxy);
  });

  it("lets an allowed target through, pinned to the checked address", async () => {
    const { work, request } = await job(
      (d, w) =>
        standIn(
          d,
          [
            `http.get({ host: proxy.hostname, port: proxy.port, path: "http://127.0.0.1:${victim.port}/v" }, (res) => {`,
            `  res.pipe(fs.createWriteStream(${JSON.stringify(path.join(w, "source.mp4"))})).on("finish", () => process.exit(0));`,
            `});`,
          ].join("\n"),
        ),
      { policy: onlyPorts(victim.port) },
    );
    const result = await downloadWithYtdlp(request);
    expect(result.path).toBe(path.join(work, "source.mp4"));
    expect(await readFile(result.path, "utf8")).toBe("metadata secret");
  });
});

describe("the byte cap is enforced while downloading", () => {
  it("stops a chunked download written by a child process at the cap and kills the whole process group", async () => {
    const cap = 2 * 1024 * 1024;
    const { dir, work, request } = await job(
      (d, w) => standIn(d, childWriter(`http://127.0.0.1:${sourcePort}/endless`, path.join(w, "source.f137.mp4"))),
      { policy: onlyPorts(sourcePort), maxBytes: cap },
    );
    const failure = await failureOf(downloadWithYtdlp(request));
    expect(failure.code).toBe("source_too_large");
    const childPid = Number(await readFile(path.join(dir, "child.pid"), "utf8"));
    await waitFor(async () => !(await alive(childPid)), 5_000, "the writing child to die with yt-dlp");
    const size = (await stat(path.join(work, "source.f137.mp4"))).size;
    // Stopped near the cap (one look every 200 ms), not at the end of an endless body.
    expect(size).toBeGreaterThan(cap);
    expect(size).toBeLessThan(cap + 512 * 1024 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await stat(path.join(work, "source.f137.mp4"))).size).toBe(size);
    await waitFor(() => openSourceSockets === 0, 5_000, "the source connection to close");
  });
});

describe("cancel stops everything yt-dlp started", () => {
  it("kills the process group on abort: no child keeps writing into the work directory", async () => {
    const controller = new AbortController();
    const { dir, work, request } = await job(
      (d, w) => standIn(d, childMerger(path.join(w, "source.temp.mp4"))),
      { maxBytes: 1e9, signal: controller.signal },
    );
    const pending = downloadWithYtdlp(request);
    const pidFile = path.join(dir, "child.pid");
    await waitFor(async () => (await stat(path.join(work, "source.temp.mp4")).catch(() => null))?.size !== undefined, 10_000, "the child to write");
    const childPid = Number(await readFile(pidFile, "utf8"));
    controller.abort(new Error("canceled by test"));
    await expect(pending).rejects.toThrow("canceled by test");
    await waitFor(async () => !(await alive(childPid)), 5_000, "the writing child to die");
    const size = (await stat(path.join(work, "source.temp.mp4"))).size;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await stat(path.join(work, "source.temp.mp4"))).size).toBe(size);
  });
});

describe("duration", () => {
  it("refuses a video over the source limit from its metadata, before downloading", async () => {
    const { dir, request } = await job((d) =>
      standIn(
        d,
        [
          `fs.writeFileSync(dir + "/filter.txt", after("--match-filter"));`,
          `console.log("[vimeo] 123: Downloading webpage");`,
          `console.log("[download] Lecture: Video does not pass filter (!is_live & duration <=? 600), skipping ..");`,
        ].join("\n"),
      ),
    );
    const failure = await failureOf(downloadWithYtdlp(request));
    expect(failure.code).toBe("source_too_long");
    expect(failure.message).toMatch(/10-minute source limit/);
    expect(await readFile(path.join(dir, "filter.txt"), "utf8")).toBe("!is_live & duration <=? 600");
  });
});
