/**
 * A speech-to-text chunk cut from the analysis's PCM (analyse/measure.ts
 * SpeechPcm) instead of decoded from the source again: the measuring pass
 * already wrote the audio as mono 16 kHz s16le, the format the Worker's
 * /transcribe route takes, so a chunk is a WAV header and a byte range of
 * that file. One decode of the source serves the transcript too:
 * no ffmpeg run per chunk, and the first request leaves as soon as the
 * analysis ends.
 *
 * The PCM counts from the audio stream's first sample, a chunk's times from
 * the container's start: the cut is used only where the two agree (the probe
 * found the audio starting with the container, SourceInfo.audioLeadSeconds
 * 0) and the whole source was measured (no time_range seek). Anywhere else
 * the chunk is extracted by ffmpeg as before (chunk-plan.ts chunkArgs).
 */
import { open, writeFile } from "node:fs/promises";
import { TRANSCRIBE_MAX_CHUNK_BYTES } from "#contract";
import type { SpeechPcm } from "../analyse/measure.ts";
import { BYTES_PER_SAMPLE, SAMPLE_RATE } from "../analyse/speech-model.ts";
import type { SourceInfo } from "../shared/types.ts";
import type { Span } from "./chunk-plan.ts";

const WAV_HEADER_BYTES = 44;
/** Audio lead the probe may report for audio that starts with the container (rounding of its times). */
const LEAD_TOLERANCE_SECONDS = 0.0005;
/** A cut shorter than this (the PCM ended before the chunk) is left to ffmpeg, which decides as it always did. */
const MIN_CUT_SECONDS = 0.1;

/** Whether chunks of `source` can be cut from `pcm`: the PCM's time 0 is the source's. */
export function pcmServes(source: SourceInfo, pcm: SpeechPcm | null | undefined): pcm is SpeechPcm {
  return (
    pcm !== null &&
    pcm !== undefined &&
    !source.seekSeconds &&
    source.audioLeadSeconds !== undefined &&
    Math.abs(source.audioLeadSeconds) <= LEAD_TOLERANCE_SECONDS
  );
}

/** The canonical 44-byte header of a mono 16-bit PCM WAV holding `dataBytes`. */
export function wavHeader(dataBytes: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * BYTES_PER_SAMPLE, 28); // byte rate
  header.writeUInt16LE(BYTES_PER_SAMPLE, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write("data", 36, "ascii");
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/**
 * The PCM's byte range for `chunk`: whole samples, within the file and the
 * route's size limit. Times are taken to the millisecond first, as the chunk's
 * start goes to the Worker (report.ts) and to ffmpeg's -ss (chunkArgs): the
 * words the Worker places from that start line up with the audio sent.
 */
export function pcmRange(pcm: SpeechPcm, chunk: Span): { from: number; to: number } {
  const sample = (seconds: number) => Math.max(0, Math.round(Number(seconds.toFixed(3)) * SAMPLE_RATE)) * BYTES_PER_SAMPLE;
  const whole = pcm.bytes - (pcm.bytes % BYTES_PER_SAMPLE);
  const from = Math.min(sample(chunk.start), whole);
  const limit = TRANSCRIBE_MAX_CHUNK_BYTES - WAV_HEADER_BYTES;
  const to = Math.min(sample(chunk.end), whole, from + limit - (limit % BYTES_PER_SAMPLE));
  return { from, to: Math.max(from, to) };
}

/**
 * Writes `chunk` of the PCM to `outPath` as a WAV; false (nothing written)
 * when the PCM holds less than MIN_CUT_SECONDS of it.
 */
export async function cutWavFromPcm(pcm: SpeechPcm, chunk: Span, outPath: string): Promise<boolean> {
  const { from, to } = pcmRange(pcm, chunk);
  if (to - from < MIN_CUT_SECONDS * SAMPLE_RATE * BYTES_PER_SAMPLE) return false;
  // One buffer for the file: the header, then the samples read straight into place behind it.
  const wav = Buffer.alloc(WAV_HEADER_BYTES + (to - from));
  wavHeader(to - from).copy(wav);
  const data = wav.subarray(WAV_HEADER_BYTES);
  const handle = await open(pcm.path, "r");
  try {
    let read = 0;
    while (read < data.length) {
      const { bytesRead } = await handle.read(data, read, data.length - read, from + read);
      if (bytesRead === 0) return false; // the file is shorter than the pass said: let ffmpeg decide
      read += bytesRead;
    }
  } finally {
    await handle.close();
  }
  await writeFile(outPath, wav);
  return true;
}
