/**
 * Source 2: a text subtitle track inside the source file (mov_text, SubRip,
 * WebVTT, ASS/SSA). ffmpeg writes the first text track out, capped in size:
 * ASS as ASS (its events are parsed here, drawings dropped), anything else
 * converted to SubRip; then the strict parser reads it. Picture subtitles (DVD, PGS) hold
 * no text and are skipped.
 */
import { readFile } from "node:fs/promises";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { pinnedDemuxer } from "../source/probe.ts";
import type { SourceInfo, SubtitleStreamInfo } from "../shared/types.ts";
import { MAX_CAPTIONS_BYTES, decodeCaptionBytes, parseAss, parseCaptions, type Cue } from "./cues.ts";

const TEXT_SUBTITLE_CODECS = new Set(["subrip", "srt", "ass", "ssa", "mov_text", "webvtt", "text"]);
const TIMEOUT_MS = 120_000;

export interface TrackCues {
  cues: Cue[];
  language: string | null;
}

/** ISO 639-2 tags as containers store them, mapped to the two-letter codes Whisper and browsers use. */
const LANGUAGE_639_1: Record<string, string> = {
  eng: "en", fre: "fr", fra: "fr", ger: "de", deu: "de", spa: "es", ita: "it", por: "pt", dut: "nl", nld: "nl",
  jpn: "ja", chi: "zh", zho: "zh", kor: "ko", rus: "ru", ara: "ar", hin: "hi", pol: "pl", tur: "tr", swe: "sv",
};

export function languageCode(tag: string | undefined): string | null {
  if (!tag) return null;
  const lower = tag.trim().toLowerCase();
  if (lower === "" || lower === "und") return null;
  if (/^[a-z]{2}(?:[-_][a-z0-9]+)?$/.test(lower)) return lower.slice(0, 2);
  return LANGUAGE_639_1[lower] ?? (/^[a-z]{3}$/.test(lower) ? lower : null);
}

/** The source's subtitle streams, probed (for a SourceInfo made without them). */
async function probeSubtitleStreams(runner: FfmpegRunner, source: SourceInfo, signal: AbortSignal): Promise<SubtitleStreamInfo[]> {
  const probe = await runner.ffprobe({
    args: ["-v", "error", "-protocol_whitelist", "file", "-f", pinnedDemuxer(source.format), "-select_streams", "s", "-show_entries", "stream=index,codec_name:stream_tags=language", "-of", "json", "-i", source.path],
    inputs: [source.path],
    outputs: [],
    timeoutMs: TIMEOUT_MS,
    signal,
  });
  try {
    return (JSON.parse(probe.stdout) as { streams?: SubtitleStreamInfo[] }).streams ?? [];
  } catch {
    return [];
  }
}

/** The source's first text subtitle track as cues, or null when it has none that parses. */
export async function subtitleTrackCues(
  runner: FfmpegRunner,
  source: SourceInfo,
  outPath: string,
  signal: AbortSignal,
): Promise<{ found: TrackCues | null; note: string }> {
  // The source's probe already listed its streams (it runs before the analysis): no second ffprobe after it.
  const streams = source.subtitleStreams ?? (await probeSubtitleStreams(runner, source, signal));
  const position = streams.findIndex((s) => TEXT_SUBTITLE_CODECS.has(s.codec_name ?? ""));
  if (position < 0) return { found: null, note: streams.length > 0 ? "the source's subtitle tracks are pictures, not text" : "the source has no subtitle track" };
  const stream = streams[position]!;
  // ASS keeps its own events (a SubRip conversion would turn drawings into words); the rest becomes SubRip.
  const isAss = stream.codec_name === "ass" || stream.codec_name === "ssa";
  const result = await runner.ffmpeg({
    args: [
      "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
      "-protocol_whitelist", "file",
      "-f", pinnedDemuxer(source.format),
      "-i", source.path,
      "-map", `0:${stream.index}`,
      "-c:s", isAss ? "ass" : "srt",
      "-fs", String(MAX_CAPTIONS_BYTES),
      "-f", isAss ? "ass" : "srt", outPath,
    ],
    inputs: [source.path],
    outputs: [outPath],
    timeoutMs: TIMEOUT_MS,
    signal,
  });
  if (result.exitCode !== 0) return { found: null, note: "the source's subtitle track could not be read" };
  const bytes = await readFile(outPath);
  if (bytes.length >= MAX_CAPTIONS_BYTES) return { found: null, note: "the source's subtitle track is too large" };
  try {
    const text = decodeCaptionBytes(bytes);
    const parsed = isAss ? parseAss(text) : parseCaptions(text);
    return { found: { cues: parsed.cues, language: languageCode(stream.tags?.language) }, note: "subtitle track" };
  } catch (error) {
    return { found: null, note: `the source's subtitle track is unusable (${error instanceof Error ? error.message : String(error)})` };
  }
}
