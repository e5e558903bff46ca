import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { JobFailure } from "../errors.ts";
import { ProcessTimeoutError, runProcess } from "../spawn.ts";
import type { Platform } from "./platforms.ts";

/** The file name (without extension) yt-dlp writes the source to. */
const OUTPUT_STEM = "source";

export interface YtdlpDownloadRequest {
  ytdlpPath: string | null;
  url: URL;
  platform: Platform;
  workDir: string;
  maxBytes: number;
  tooLargeMessage: string;
  timeoutMs: number;
  signal: AbortSignal;
  onProgress?: (fraction: number) => void;
}

export interface YtdlpDownloadResult {
  path: string;
  title: string | null;
  bytes: number;
}

/** The argument array for one download: one video, one platform, bounded. */
export function buildYtdlpArgs(req: { url: URL; platform: Platform; workDir: string; maxBytes: number }): string[] {
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
    "--match-filter",
    "!is_live",
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

export async function downloadWithYtdlp(req: YtdlpDownloadRequest): Promise<YtdlpDownloadResult> {
  if (!req.ytdlpPath) {
    throw new JobFailure(
      "unsupported_platform",
      `${req.platform.name} links need the platform downloader (yt-dlp), which this engine does not have installed. Use a direct link to the video file instead.`,
    );
  }
  let result;
  try {
    result = await runProcess({
      command: req.ytdlpPath,
      args: buildYtdlpArgs(req),
      timeoutMs: req.timeoutMs,
      signal: req.signal,
      cwd: req.workDir,
      onStdoutLine: (line) => {
        const match = PERCENT_LINE.exec(line);
        if (match) req.onProgress?.(Math.min(1, Number(match[1]) / 100));
      },
    });
  } catch (error) {
    if (error instanceof ProcessTimeoutError) {
      throw new JobFailure("source_unreachable", `The ${req.platform.name} download took longer than the time limit.`);
    }
    throw error;
  }
  const file = await findOutput(req.workDir);
  if (result.exitCode !== 0 || !file) {
    const tail = result.stderrTail.trim().split("\n").pop() ?? "";
    if (/larger than max-filesize|File is larger/i.test(result.stderrTail + result.stdout)) {
      throw new JobFailure("source_too_large", req.tooLargeMessage);
    }
    throw new JobFailure("source_unreachable", `The ${req.platform.name} video could not be downloaded${tail ? `: ${tail.slice(0, 200)}` : "."}`);
  }
  const bytes = (await stat(file)).size;
  if (bytes > req.maxBytes) throw new JobFailure("source_too_large", req.tooLargeMessage);
  return { path: file, title: await readTitle(req.workDir), bytes };
}
