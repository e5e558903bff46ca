import { basename, extname } from "node:path";
import { JobFailure } from "../shared/errors.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import type { SourceInfo, SubtitleStreamInfo } from "../shared/types.ts";

/**
 * Probes a downloaded source with ffprobe and decides whether it is a video
 * the engine accepts (SPEC section 7).
 *
 * Pass 1 only detects the container: `-format_whitelist` makes libavformat
 * refuse any other demuxer before it reads a header, so an HLS playlist, a
 * concat list or an image sequence never gets to open the files it names.
 * Pass 2 reads streams with the detected demuxer pinned by `-f`, and both
 * passes allow only the `file` protocol.
 */

/** ffprobe demuxer names accepted; each is a self-contained single-file container. */
export const ALLOWED_DEMUXERS = ["mov", "mp4", "m4a", "3gp", "3g2", "mj2", "matroska", "webm", "avi", "flv", "mpegts", "mpeg"] as const;

const PROBE_TIMEOUT_MS = 60_000;

interface ProbeStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  tags?: Record<string, string>;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  start_time?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
  /** The display matrix's turn, in degrees (ffmpeg turns the picture upright when it decodes). */
  side_data_list?: { rotation?: number }[];
}

interface ProbeOutput {
  format?: { format_name?: string; duration?: string; start_time?: string; tags?: Record<string, string> };
  streams?: ProbeStream[];
}

function notVideo(detail: string): JobFailure {
  return new JobFailure("source_not_video", `The file is not a video the engine can process: ${detail}. Accepted containers: MP4/MOV, MKV/WebM, AVI, FLV, MPEG-TS and MPEG-PS.`);
}

function parseJson(stdout: string): ProbeOutput {
  try {
    return JSON.parse(stdout) as ProbeOutput;
  } catch {
    return {};
  }
}

function rate(text: string | undefined): number {
  if (!text) return 0;
  const [num, den] = text.split("/").map(Number);
  if (num === undefined || !Number.isFinite(num)) return 0;
  if (den === undefined) return num;
  return den > 0 ? num / den : 0;
}

function positive(value: string | undefined): number {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** The first demuxer name of a format_name list, for `-f` when re-opening. */
export function pinnedDemuxer(formatName: string): string {
  return formatName.split(",")[0] ?? formatName;
}

function formatLength(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function titleFromUrl(videoUrl: string): string {
  try {
    const last = decodeURIComponent(basename(new URL(videoUrl).pathname));
    const stem = last.slice(0, last.length - extname(last).length).replace(/[_+]+/g, " ").trim();
    return stem || "Untitled video";
  } catch {
    return "Untitled video";
  }
}

function tagTitle(tags: Record<string, string> | undefined): string | null {
  if (!tags) return null;
  for (const [key, value] of Object.entries(tags)) {
    if (key.toLowerCase() === "title" && value.trim() !== "") return value.trim();
  }
  return null;
}

export interface ProbeRequest {
  runner: FfmpegRunner;
  path: string;
  sizeBytes: number;
  videoUrl: string;
  /** Title from the platform (yt-dlp), which wins over tags and file name. */
  platformTitle: string | null;
  maxSourceSeconds: number;
  signal: AbortSignal;
}

/** Largest picture accepted: 8K UHD, either orientation. */
export const MAX_SOURCE_SIDE = 8192;
export const MAX_SOURCE_PIXELS = 7680 * 4320;

interface ProbedStreams {
  formatName: string;
  probed: ProbeOutput & { format: NonNullable<ProbeOutput["format"]> };
  video: ProbeStream;
  width: number;
  height: number;
}

/**
 * The probe and the checks that need no duration: the container (detected
 * among the accepted demuxers only, `-format_whitelist`), a video stream, the
 * picture's size. One ffprobe run: it used to be two (the container first,
 * then the streams with that demuxer pinned), which gave the same answer,
 * since a demuxer detected under the allow-list is the one pinning names; on
 * the streamed analysis's path each run costs about 0.1 s of CPU and 0.2-0.4 s
 * of wall while the download takes the cores.
 */
async function probeStreams(runner: FfmpegRunner, path: string, signal: AbortSignal): Promise<ProbedStreams> {
  const probe = await runner.ffprobe({
    inputs: [path],
    outputs: [],
    timeoutMs: PROBE_TIMEOUT_MS,
    signal,
    args: ["-v", "error", "-protocol_whitelist", "file", "-format_whitelist", ALLOWED_DEMUXERS.join(","), "-show_format", "-show_streams", "-of", "json", "-i", path],
  });
  const probed = parseJson(probe.stdout);
  const formatName = probed.format?.format_name;
  if (probe.exitCode !== 0 || !probed.format || !formatName) throw notVideo("its format is not an accepted video container");
  const demuxer = pinnedDemuxer(formatName);
  if (!(ALLOWED_DEMUXERS as readonly string[]).includes(demuxer)) throw notVideo(`format ${formatName} is not accepted`);
  const video = probed.streams?.find((s) => s.codec_type === "video" && !s.disposition?.attached_pic && (s.width ?? 0) > 0 && (s.height ?? 0) > 0);
  if (!video) throw notVideo("it has no video stream");
  const width = video.width ?? 0;
  const height = video.height ?? 0;
  // Decoding cost and frame memory grow with the picture: a header claiming an
  // enormous frame must not reach the decoder. 8K UHD is the largest accepted.
  if (Math.max(width, height) > MAX_SOURCE_SIDE || width * height > MAX_SOURCE_PIXELS) {
    throw new JobFailure(
      "source_too_large",
      `The video's picture is ${width}x${height}; the largest accepted is 8K (7680x4320, or up to ${MAX_SOURCE_SIDE} pixels on a side).`,
    );
  }
  return { formatName, probed: { ...probed, format: probed.format }, video, width, height };
}

/** What the head of a source still downloading tells: enough to start the analysis on it (analyse/early.ts). */
export interface HeadInfo {
  /** ffprobe's format_name, checked against the allow-list (pin with pinnedDemuxer). */
  format: string;
  hasAudio: boolean;
}

/**
 * Probes the head of a source that is still downloading, with the same
 * passes and checks as probeSource except the duration (a partial file's is
 * unknown or wrong). Only for starting the analysis early: the finished file
 * is probed again, and that probe decides.
 */
export async function probeHead(runner: FfmpegRunner, path: string, signal: AbortSignal): Promise<HeadInfo> {
  const { formatName, probed } = await probeStreams(runner, path, signal);
  return { format: formatName, hasAudio: probed.streams?.some((s) => s.codec_type === "audio") ?? false };
}

/** The subtitle streams of the full probe, as the transcript's subtitle-track step reads them (track.ts). */
function subtitleStreams(streams: ProbeStream[]): SubtitleStreamInfo[] {
  return streams
    .filter((s) => s.codec_type === "subtitle" && Number.isInteger(s.index))
    .map((s) => ({ index: s.index!, ...(s.codec_name ? { codec_name: s.codec_name } : {}), ...(s.tags ? { tags: s.tags } : {}) }));
}

/** Degrees the decoder turns the stored picture to show it upright (the display matrix), when it is not 0. */
function rotation(video: ProbeStream): { rotation?: number } {
  const degrees = video.side_data_list?.find((d) => typeof d.rotation === "number" && Number.isFinite(d.rotation))?.rotation ?? 0;
  return degrees !== 0 ? { rotation: degrees } : {};
}

/** The first audio stream's start relative to the container's, when the probe gave both. */
function audioLead(probed: ProbeOutput): { audioLeadSeconds?: number } {
  const audio = probed.streams?.find((s) => s.codec_type === "audio");
  const audioStart = Number(audio?.start_time);
  const formatStart = Number(probed.format?.start_time);
  return audio?.start_time !== undefined && probed.format?.start_time !== undefined && Number.isFinite(audioStart) && Number.isFinite(formatStart)
    ? { audioLeadSeconds: audioStart - formatStart }
    : {};
}

export async function probeSource(req: ProbeRequest): Promise<SourceInfo> {
  const { formatName, probed, video, width, height } = await probeStreams(req.runner, req.path, req.signal);
  const duration = positive(probed.format.duration) || positive(video.duration);
  if (duration <= 0) throw notVideo("its duration could not be determined");
  if (duration > req.maxSourceSeconds) {
    throw new JobFailure("source_too_long", `The video is ${formatLength(duration)} long; the limit is ${formatLength(req.maxSourceSeconds)}.`);
  }
  const title = (req.platformTitle ?? tagTitle(probed.format.tags) ?? titleFromUrl(req.videoUrl)).slice(0, 300);
  return {
    path: req.path,
    sizeBytes: req.sizeBytes,
    durationSeconds: duration,
    format: formatName,
    title,
    width,
    height,
    fps: rate(video.avg_frame_rate) || rate(video.r_frame_rate),
    hasAudio: probed.streams?.some((s) => s.codec_type === "audio") ?? false,
    subtitleStreams: subtitleStreams(probed.streams ?? []),
    startTime: Number(video.start_time ?? probed.format.start_time ?? 0) || 0,
    ...rotation(video),
    ...audioLead(probed),
  };
}
