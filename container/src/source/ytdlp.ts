import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { JobFailure } from "../shared/errors.ts";
import { childEnvironment, ProcessTimeoutError, runProcess } from "../shared/spawn.ts";
import type { AddressPolicy, Resolver } from "./address-policy.ts";
import { startEgressProxy } from "./egress-proxy.ts";
import type { UpstreamProxy } from "./upstream-proxy.ts";
import type { Platform } from "./platforms.ts";
import { watchWrittenBytes } from "./written-bytes.ts";
import { classifyYtdlpError, refusalAdvice } from "./ytdlp-failures.ts";

/** The file name (without extension) yt-dlp writes the source to. */
const OUTPUT_STEM = "source";
/** The account's cookies file, when it has one for the platform. */
const COOKIES_FILE = "platform-cookies.txt";

export interface YtdlpDownloadRequest {
  ytdlpPath: string | null;
  url: URL;
  platform: Platform;
  workDir: string;
  maxBytes: number;
  tooLargeMessage: string;
  /** Longest accepted source: longer videos are refused before downloading. */
  maxSeconds: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** The download rules every connection of yt-dlp is held to (through the egress proxy). */
  policy: AddressPolicy;
  resolver: Resolver;
  /** The operator's proxy for platform downloads (PLATFORM_PROXY_URL), or none. */
  upstreamProxy?: UpstreamProxy | null;
  onProgress?: (fraction: number) => void;
  /** The account's cookies file for this platform (Netscape format), or null: written for yt-dlp only, in the work dir. */
  cookies?: string | null;
}

export interface YtdlpDownloadResult {
  path: string;
  title: string | null;
  bytes: number;
}

export interface YtdlpArgsRequest {
  url: URL;
  platform: Platform;
  workDir: string;
  maxBytes: number;
  maxSeconds: number;
  proxyUrl: string;
  /** Path of the cookies file yt-dlp reads, when the account stored one for the platform. */
  cookiesPath?: string | null;
}

/** The argument array for one download: one video, one platform, bounded, through the egress proxy. */
export function buildYtdlpArgs(req: YtdlpArgsRequest): string[] {
  return [
    "--ignore-config",
    "--no-playlist",
    "--no-cache-dir",
    "--no-mtime",
    "--no-part",
    "--newline",
    // YouTube needs a JavaScript runtime for its challenges; the engine's own Node serves.
    "--js-runtimes",
    `node:${process.execPath}`,
    "--use-extractors",
    req.platform.extractors.join(","),
    // Live streams and videos longer than the limit are refused from the metadata,
    // before any media is downloaded (an unknown duration passes; the probe checks it).
    "--match-filter",
    `!is_live & duration <=? ${Math.floor(req.maxSeconds)}`,
    "--proxy",
    req.proxyUrl,
    ...(req.cookiesPath ? ["--cookies", req.cookiesPath] : []),
    // yt-dlp's own HLS/DASH downloader (through --proxy), not an ffmpeg fetching on its own.
    "--downloader",
    "native",
    // A Content-Length check only: the engine also watches what is written (written-bytes.ts).
    "--max-filesize",
    String(req.maxBytes),
    "--socket-timeout",
    "30",
    "--retries",
    "3",
    "-f",
    "bv*[height<=1080][ext=mp4]+ba[ext=m4a]/b[height<=1080][ext=mp4]/bv*[height<=1080]+ba/b[height<=1080]/b",
    "--merge-output-format",
    "mp4",
    "--write-info-json",
    "--paths",
    req.workDir,
    "-o",
    `${OUTPUT_STEM}.%(ext)s`,
    // "--" ends the options: a URL can never be read as one.
    "--",
    req.url.href,
  ];
}

const PERCENT_LINE = /^\[download\]\s+([\d.]+)%/;

async function findOutput(workDir: string): Promise<string | null> {
  const names = await readdir(workDir);
  const media = names.find(
    (n) => n.startsWith(`${OUTPUT_STEM}.`) && !n.endsWith(".info.json") && !n.endsWith(".part") && !n.endsWith(".ytdl"),
  );
  return media ? path.join(workDir, media) : null;
}

async function readTitle(workDir: string): Promise<string | null> {
  try {
    const info: unknown = JSON.parse(await readFile(path.join(workDir, `${OUTPUT_STEM}.info.json`), "utf8"));
    const title = (info as { title?: unknown }).title;
    return typeof title === "string" && title.trim() !== "" ? title.trim() : null;
  } catch {
    return null;
  }
}

/**
 * yt-dlp's environment: the minimal one every child gets (spawn.ts), and the
 * proxy variables, for whatever yt-dlp starts (ffmpeg honours http_proxy).
 */
export function proxyEnvironment(proxyUrl: string): NodeJS.ProcessEnv {
  return childEnvironment(process.env, {
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    ALL_PROXY: proxyUrl,
    all_proxy: proxyUrl,
    NO_PROXY: "",
    no_proxy: "",
  });
}

const FILTERED_LINE = /does not pass filter/i;

export async function downloadWithYtdlp(req: YtdlpDownloadRequest): Promise<YtdlpDownloadResult> {
  if (!req.ytdlpPath) {
    throw new JobFailure(
      "unsupported_platform",
      `${req.platform.name} links need the platform downloader (yt-dlp), which this engine does not have installed. Use a direct link to the video file instead.`,
    );
  }
  // Readable by the engine's user only; removed with the work dir (yt-dlp may write refreshed cookies back to it).
  const cookiesPath = req.cookies ? path.join(req.workDir, COOKIES_FILE) : null;
  if (cookiesPath && req.cookies) await writeFile(cookiesPath, req.cookies, { mode: 0o600 });
  const proxy = await startEgressProxy({ policy: req.policy, resolver: req.resolver, upstream: req.upstreamProxy ?? null });
  // Stops the download from inside (the byte cap) as well as from outside (cancel, shutdown).
  const local = new AbortController();
  const signal = AbortSignal.any([req.signal, local.signal]);
  const watcher = watchWrittenBytes(req.workDir, req.maxBytes, () => local.abort(new JobFailure("source_too_large", req.tooLargeMessage)));
  let filtered = false;
  // Every ERROR line, whole: the platform's refusal is read from them (ytdlp-failures.ts).
  const errorLines: string[] = [];
  let result;
  try {
    result = await runProcess({
      command: req.ytdlpPath,
      args: buildYtdlpArgs({ ...req, proxyUrl: proxy.url, cookiesPath }),
      env: proxyEnvironment(proxy.url),
      processGroup: true,
      timeoutMs: req.timeoutMs,
      signal,
      cwd: req.workDir,
      onStdoutLine: (line) => {
        if (FILTERED_LINE.test(line)) filtered = true;
        const match = PERCENT_LINE.exec(line);
        if (match) req.onProgress?.(Math.min(1, Number(match[1]) / 100));
      },
      onStderrLine: (line) => {
        if (FILTERED_LINE.test(line)) filtered = true;
        if (line.startsWith("ERROR:") && errorLines.length < 20) errorLines.push(line);
      },
    });
  } catch (error) {
    if (error instanceof ProcessTimeoutError) {
      throw new JobFailure("source_unreachable", `The ${req.platform.name} download took longer than the time limit.`);
    }
    throw error;
  } finally {
    watcher.stop();
    await proxy.close();
  }
  // The last check: a file that grew past the cap between two looks.
  if (await watcher.overCap()) throw new JobFailure("source_too_large", req.tooLargeMessage);
  const file = await findOutput(req.workDir);
  if (result.exitCode !== 0 || !file) {
    const refusal = proxy.refusals[0];
    if (refusal) throw new JobFailure("source_unreachable", refusal);
    if (filtered) {
      throw new JobFailure(
        "source_too_long",
        `The ${req.platform.name} video is a live stream or longer than the ${Math.round(req.maxSeconds / 60)}-minute source limit.`,
      );
    }
    const tail = result.stderrTail.trim().split("\n").pop() ?? "";
    if (/larger than max-filesize|File is larger/i.test(result.stderrTail + result.stdout)) {
      throw new JobFailure("source_too_large", req.tooLargeMessage);
    }
    const refused = classifyYtdlpError(errorLines.join("\n"));
    if (refused) {
      const advice = cookiesPath && (refused.code === "source_sign_in_required" || refused.code === "source_age_restricted")
        ? `The ${req.platform.name} cookies file stored for your account did not get through: it may have expired or been signed out; export a fresh one from a signed-in browser.`
        : refusalAdvice(refused.code, req.platform.name, req.platform.id);
      throw new JobFailure(refused.code, `${req.platform.name} said: \u201c${refused.words}\u201d${advice ? ` ${advice}` : ""}`);
    }
    throw new JobFailure("source_unreachable", `The ${req.platform.name} video could not be downloaded${tail ? `: ${tail.slice(0, 200)}` : "."}`);
  }
  const bytes = (await stat(file)).size;
  if (bytes > req.maxBytes) throw new JobFailure("source_too_large", req.tooLargeMessage);
  return { path: file, title: await readTitle(req.workDir), bytes };
}
