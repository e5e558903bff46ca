/**
 * The account's logo for a job's clips: read once per job from
 * the Worker's job channel (GET .../logo with the job token), checked again
 * here (PNG or JPEG by its bytes, decodable by this ffmpeg, at most 1024
 * pixels a side) and placed by the configuration: a corner, a width as a
 * share of the clip's, an opacity.
 *
 * A logo that cannot be had (deleted since the job was submitted, or one
 * ffmpeg cannot decode) never fails the job: the clips are made without it
 * and the job's step says so.
 */
import { writeFile } from "node:fs/promises";
import { MAX_LOGO_BYTES, MAX_LOGO_PIXELS, type ClipConfig } from "#contract";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import type { JobReporter } from "../channel/report.ts";

export interface PreparedLogo {
  path: string;
  /** ffmpeg's demuxer for the file (pinned, never probed from the content at render time). */
  demuxer: "png_pipe" | "jpeg_pipe";
  width: number;
  height: number;
}

export type LogoOutcome = { kind: "ready"; logo: PreparedLogo } | { kind: "none"; reason: string };

const PROBE_TIMEOUT_MS = 30_000;

function demuxerOf(bytes: Buffer): PreparedLogo["demuxer"] | null {
  if (bytes.length > 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png_pipe";
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg_pipe";
  return null;
}

export async function prepareLogo(opts: {
  reporter: Pick<JobReporter, "getLogo">;
  runner: FfmpegRunner;
  path: string;
  signal: AbortSignal;
}): Promise<LogoOutcome> {
  const fetched = await opts.reporter.getLogo(MAX_LOGO_BYTES);
  if (!fetched) return { kind: "none", reason: "the account has no logo any more" };
  const demuxer = demuxerOf(fetched.bytes);
  if (!demuxer) return { kind: "none", reason: "the logo is not a PNG or JPEG" };
  await writeFile(opts.path, fetched.bytes);
  const probe = await opts.runner.ffprobe({
    args: ["-v", "error", "-protocol_whitelist", "file", "-f", demuxer, "-i", opts.path, "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "json"],
    inputs: [opts.path],
    outputs: [],
    timeoutMs: PROBE_TIMEOUT_MS,
    signal: opts.signal,
  });
  let size: { width?: number; height?: number } | undefined;
  try {
    size = (JSON.parse(probe.stdout) as { streams?: { width?: number; height?: number }[] }).streams?.[0];
  } catch {
    size = undefined;
  }
  const width = size?.width ?? 0;
  const height = size?.height ?? 0;
  if (probe.exitCode !== 0 || width <= 0 || height <= 0) return { kind: "none", reason: "the logo could not be decoded" };
  if (width > MAX_LOGO_PIXELS || height > MAX_LOGO_PIXELS) return { kind: "none", reason: "the logo is over 1024 pixels" };
  return { kind: "ready", logo: { path: opts.path, demuxer, width, height } };
}

/** Where the logo is drawn in the output picture, in pixels. */
export interface LogoPlacement {
  x: number;
  y: number;
  width: number;
  height: number;
  opacity: number;
}

/** Margin from the picture's edges: 4% of its shorter side. */
export function logoMargin(output: { width: number; height: number }): number {
  return Math.round(Math.min(output.width, output.height) * 0.04);
}

export function placeLogo(
  config: Pick<ClipConfig, "logo_position" | "logo_size" | "logo_opacity">,
  output: { width: number; height: number },
  logo: Pick<PreparedLogo, "width" | "height">,
): LogoPlacement | null {
  if (config.logo_position === "off") return null;
  const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);
  const width = even((output.width * config.logo_size) / 100);
  const height = even((width * logo.height) / logo.width);
  const margin = logoMargin(output);
  const [vertical, horizontal] = config.logo_position.split("-") as ["top" | "bottom", "left" | "right"];
  return {
    x: horizontal === "left" ? margin : output.width - width - margin,
    y: vertical === "top" ? margin : output.height - height - margin,
    width,
    height,
    opacity: config.logo_opacity,
  };
}
