/**
 * What the Workers AI stage sends: the speech parts of the audio cut into
 * chunks of at most TRANSCRIBE_MAX_CHUNK_SECONDS with a small overlap (so no
 * word is lost at a seam), and the ffmpeg command that extracts one chunk as
 * mono 16 kHz PCM WAV, the format the Worker's /transcribe route takes.
 */
import { TRANSCRIBE_CHUNK_OVERLAP_SECONDS, TRANSCRIBE_MAX_CHUNK_BYTES, TRANSCRIBE_MAX_CHUNK_SECONDS } from "#contract";
import { pinnedDemuxer } from "../source/probe.ts";
import type { SourceInfo } from "../shared/types.ts";

export interface Span {
  start: number;
  end: number;
}

/** Silences shorter than this stay inside a chunk: cutting there saves little and risks clipping a word. */
const SKIP_SILENCE_SECONDS = 2;
/** Audio kept on each side of a speech span. */
const SPAN_PAD_SECONDS = 0.3;

/**
 * Chunks covering the speech spans (or the whole source when none are
 * known): long silences are skipped, long speech is split with overlap.
 */
export function planChunks(duration: number, speech: Span[] | null): Span[] {
  const regions: Span[] = [];
  const spans = speech && speech.length > 0 ? [...speech].sort((a, b) => a.start - b.start) : [{ start: 0, end: duration }];
  for (const span of spans) {
    const start = Math.max(0, span.start - SPAN_PAD_SECONDS);
    const end = Math.min(duration, span.end + SPAN_PAD_SECONDS);
    if (end <= start) continue;
    const last = regions[regions.length - 1];
    if (last && start - last.end < SKIP_SILENCE_SECONDS) last.end = Math.max(last.end, end);
    else regions.push({ start, end });
  }
  const step = TRANSCRIBE_MAX_CHUNK_SECONDS - TRANSCRIBE_CHUNK_OVERLAP_SECONDS;
  const chunks: Span[] = [];
  for (const region of regions) {
    for (let at = region.start; ; at += step) {
      const end = Math.min(region.end, at + TRANSCRIBE_MAX_CHUNK_SECONDS);
      chunks.push({ start: at, end });
      if (end >= region.end) break;
    }
  }
  return chunks;
}

export function chunkArgs(source: SourceInfo, chunk: Span, outPath: string): string[] {
  return [
    "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
    "-protocol_whitelist", "file",
    "-ss", chunk.start.toFixed(3),
    "-f", pinnedDemuxer(source.format),
    "-i", source.path,
    "-t", (chunk.end - chunk.start).toFixed(3),
    "-map", "0:a:0", "-vn", "-sn", "-dn",
    "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le",
    "-fs", String(TRANSCRIBE_MAX_CHUNK_BYTES),
    "-f", "wav", outPath,
  ];
}
