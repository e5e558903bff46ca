import { statfs } from "node:fs/promises";
import type { EngineLimits } from "#contract";
import { JobFailure } from "../shared/errors.ts";
import type { AddressPolicy, Resolver } from "./address-policy.ts";
import { policyFor, systemResolver } from "./address-policy.ts";
import { classifySourceUrl } from "./platforms.ts";
import type { UpstreamProxy } from "./upstream-proxy.ts";
import { checkUrlForm, safeDownload } from "./safe-fetch.ts";
import { readUploadedSource } from "./upload.ts";
import { downloadWithYtdlp } from "./ytdlp.ts";

/** Fetches a job's source into its work directory: a platform via yt-dlp, else a direct link. */
export interface FetchSourceRequest {
  videoUrl: string;
  limits: EngineLimits;
  /** The engine's own ALLOW_PRIVATE_SOURCES setting. */
  allowPrivateHosts: boolean;
  /** The backend's own cap (the wasm build holds files in memory). */
  backendMaxBytes: number;
  backendName: string;
  workDir: string;
  destPath: string;
  ytdlpPath: string | null;
  stallTimeoutMs: number;
  maxRedirects: number;
  signal: AbortSignal;
  onProgress: (fraction: number) => void;
  /** Bytes may have reached destPath (a direct link or an upload; not a platform download): for reading it as it grows. */
  onWritten?: () => void;
  /** Tests inject these; production uses the limits' rule and the system resolver. */
  policy?: AddressPolicy;
  resolver?: Resolver;
  /** An upload job (StartJob.source "upload"): read the source from the Worker's job channel instead of videoUrl. */
  upload?: { url: string; token: string };
  /** Reads the account's cookies file for the video's platform (the job channel), or null; asked only for a platform download. */
  platformCookies?: () => Promise<string | null>;
  /** The operator's proxy for platform downloads (PLATFORM_PROXY_URL), or none. */
  platformProxy?: UpstreamProxy | null;
}

export interface FetchedSource {
  path: string;
  bytes: number;
  /** Platform title when the platform gave one. */
  title: string | null;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${Math.round(bytes / 1024 ** 2)} MiB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KiB`;
}

/** Disk kept free for the clips a job renders next to its source. */
const CLIP_HEADROOM_BYTES = 1024 ** 3;

async function freeDiskBytes(dir: string): Promise<number> {
  try {
    const fs = await statfs(dir);
    return fs.bavail * fs.bsize;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}

function byteCap(req: FetchSourceRequest, diskBytes: number): { maxBytes: number; message: string } {
  const diskCap = Math.max(0, diskBytes - CLIP_HEADROOM_BYTES);
  if (diskCap < Math.min(req.limits.max_source_bytes, req.backendMaxBytes)) {
    return {
      maxBytes: diskCap,
      message: `The video is larger than the ${formatBytes(diskCap)} of disk space the engine has free for it right now; try again later.`,
    };
  }
  if (req.backendMaxBytes < req.limits.max_source_bytes) {
    return {
      maxBytes: req.backendMaxBytes,
      message: `The video is larger than ${formatBytes(req.backendMaxBytes)}, the most this engine's ${req.backendName} ffmpeg backend can process.`,
    };
  }
  return {
    maxBytes: req.limits.max_source_bytes,
    message: `The video is larger than the ${formatBytes(req.limits.max_source_bytes)} source size limit.`,
  };
}

/** The uploaded file's name: the Worker names it in video_url (upload://<id>/<name>). */
function uploadFileName(videoUrl: string): string | null {
  try {
    return decodeURIComponent(new URL(videoUrl).pathname.slice(1)) || null;
  } catch {
    return null;
  }
}

export async function fetchSource(req: FetchSourceRequest): Promise<FetchedSource> {
  const cap = byteCap(req, await freeDiskBytes(req.workDir));
  const timeoutMs = req.limits.download_timeout_seconds * 1000;
  if (req.upload) {
    // Same limits as a download; the title is the file's name, as the uploader named it.
    const read = await readUploadedSource({
      ...req.upload,
      destPath: req.destPath,
      maxBytes: cap.maxBytes,
      tooLargeMessage: cap.message,
      timeoutMs,
      stallTimeoutMs: req.stallTimeoutMs,
      signal: req.signal,
      onProgress: req.onProgress,
      onWritten: req.onWritten,
    });
    return { path: req.destPath, bytes: read.bytes, title: read.fileName ?? uploadFileName(req.videoUrl) };
  }
  const url = checkUrlForm(req.videoUrl);
  const match = classifySourceUrl(url);
  if (match.kind === "unsupported") {
    throw new JobFailure("unsupported_platform", `Videos from ${match.site} cannot be processed. Use a direct link to a video file or a supported platform.`);
  }
  if (match.kind === "platform") {
    const result = await downloadWithYtdlp({
      ytdlpPath: req.ytdlpPath,
      url,
      platform: match.platform,
      workDir: req.workDir,
      maxBytes: cap.maxBytes,
      tooLargeMessage: cap.message,
      maxSeconds: req.limits.max_source_seconds,
      timeoutMs,
      signal: req.signal,
      policy: req.policy ?? policyFor(req.allowPrivateHosts),
      resolver: req.resolver ?? systemResolver,
      onProgress: req.onProgress,
      cookies: req.platformCookies && req.ytdlpPath ? await req.platformCookies() : null,
      upstreamProxy: req.platformProxy ?? null,
    });
    return result;
  }
  const result = await safeDownload({
    url: url.href,
    destPath: req.destPath,
    maxBytes: cap.maxBytes,
    tooLargeMessage: cap.message,
    timeoutMs,
    stallTimeoutMs: req.stallTimeoutMs,
    maxRedirects: req.maxRedirects,
    policy: req.policy ?? policyFor(req.allowPrivateHosts),
    resolver: req.resolver ?? systemResolver,
    signal: req.signal,
    onProgress: (bytes, total) => {
      req.onWritten?.();
      if (total) req.onProgress(Math.min(1, bytes / total));
    },
  });
  return { path: req.destPath, bytes: result.bytes, title: null };
}
