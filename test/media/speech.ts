/**
 * Test sources with REAL speech (espeak-ng) at exactly known times, over a
 * chosen background bed: what a produced podcast, vlog or lecture sounds like.
 *
 * API
 *   generateSpeechSource(spec): Promise<SpeechSource>
 *     Writes an MP4 (H.264 + AAC) at spec.outPath and returns where each
 *     sentence is, in seconds of the file.
 *   cachedSpeechSource(spec, dir = ".tmp/media"): Promise<SpeechSource>
 *     Same, but reuses a file made earlier from the same spec (outPath is
 *     chosen from a hash of the spec; spec.outPath is ignored).
 *   speechFrames(sentences, duration, frameSeconds = 0.01): Uint8Array
 *     The truth per frame (1 = inside a sentence), for scoring a detector.
 *   TWO_VOICES, REFERENCE_VOICE_DBFS
 *
 * How a source is made
 *   - Each sentence is spoken by espeak-ng into its own WAV (voices alternate
 *     between spec.voices, by default a US male and a British female voice;
 *     a sentence may name its own). Emphasised sentences are spoken faster
 *     and mixed 6 dB louder, as a speaker stresses a point.
 *   - Each WAV's leading and trailing silence is trimmed (samples below
 *     -54 dBFS), so a sentence's span is exactly its sound: start = where it
 *     is placed, end = start + trimmed length. Spans are exact to one sample
 *     at 22,050 Hz; the AAC encoder's priming is removed by the MP4's edit
 *     list, which ffmpeg honours when decoding.
 *   - Sentences are separated by pauses of spec.gapSeconds (a seeded random
 *     length in the range), after spec.leadSeconds of bed alone; the bed runs
 *     on spec.tailSeconds after the last sentence, and the source lasts at
 *     least spec.minDurationSeconds.
 *   - Plain sentences are scaled together so their RMS (over their spans) is
 *     REFERENCE_VOICE_DBFS; the bed (test/media/beds.ts) is scaled so its RMS
 *     is spec.bed.gainDb below that (for applause: the RMS inside its bursts).
 *     With no sentences at all (music only), the bed is placed against the
 *     same reference. spec.bed.swells are spans where the bed is 10 dB louder
 *     (a chorus, a cheer).
 *   - Picture: ffmpeg's testsrc2 pattern (it moves), or a plain grey with
 *     spec.video.still, darkened on every other scene between
 *     spec.video.sceneChanges, so scene cuts are visible.
 *
 * espeak-ng and ffmpeg (FFMPEG_PATH or ffmpeg) must be on the PATH;
 * arguments are arrays, never a shell.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { commitCached, partialPath } from "./cache.ts";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ESPEAK_RATE, runTool, speakSentence } from "./espeak.ts";
import { makeBed, rng, applauseBursts, type BedKind } from "./beds.ts";

export type { BedKind };

/** A US English male voice and a British English female voice. */
export const TWO_VOICES = ["en-us", "en-gb+f3"] as const;
/** RMS level of plain speech in the mix. */
export const REFERENCE_VOICE_DBFS = -20;
/** Emphasised sentences are this much louder. */
const EMPHASIS_DB = 6;
const SPEED_PLAIN = 160;
const SPEED_EMPHASISED = 200;
const SWELL_DB = 10;
/** Bump when the generator's output changes, so cached files are remade. */
const VERSION = 1;

export interface SentenceSpec {
  text: string;
  emphasised?: boolean;
  /** An espeak-ng voice name; default: the next of spec.voices in turn. */
  voice?: string;
}

export interface Interval {
  start: number;
  end: number;
}

export interface SpeechSourceSpec {
  sentences: (string | SentenceSpec)[];
  voices?: readonly string[];
  /** Pause between sentences, drawn in [min, max] seconds; default [0.9, 1.6]. */
  gapSeconds?: [number, number];
  /** Bed alone before the first sentence; default 1.5 s. */
  leadSeconds?: number;
  /** Bed alone after the last sentence; default 1.5 s. */
  tailSeconds?: number;
  minDurationSeconds?: number;
  bed?: { kind: BedKind; gainDb: number; swells?: Interval[] };
  /** still: a plain picture (one grey per scene) instead of the moving test pattern. */
  video?: { width?: number; height?: number; fps?: number; sceneChanges?: number[]; still?: boolean };
  seed?: number;
  outPath: string;
}

export interface SpokenSentence extends Interval {
  text: string;
  voice: string;
  emphasised: boolean;
}

export interface SpeechSource {
  path: string;
  durationSeconds: number;
  sentences: SpokenSentence[];
  /** Applause bed only: where its bursts are. */
  bursts: Interval[];
}

const RATE = ESPEAK_RATE;

function rms(samples: Float32Array, spans: Interval[]): number {
  let sum = 0;
  let count = 0;
  for (const span of spans) {
    for (let i = Math.floor(span.start * RATE); i < Math.min(samples.length, Math.floor(span.end * RATE)); i++) {
      sum += samples[i]! ** 2;
      count++;
    }
  }
  return count > 0 ? Math.sqrt(sum / count) : 0;
}

const dbToGain = (db: number) => 10 ** (db / 20);

function wavFile(samples: Float32Array): Buffer {
  const data = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) data.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767), i * 2);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

function videoFilter(spec: SpeechSourceSpec, duration: number): string {
  const width = spec.video?.width ?? 320;
  const height = spec.video?.height ?? 180;
  const fps = spec.video?.fps ?? 15;
  const cuts = spec.video?.sceneChanges ?? [];
  const edges = [0, ...cuts, duration];
  const dark = edges.slice(0, -1).flatMap((start, i) => (i % 2 === 1 ? [`between(t,${start},${edges[i + 1]})`] : []));
  const base = spec.video?.still
    ? `color=c=0x707070:s=${width}x${height}:r=${fps}:d=${duration.toFixed(3)}`
    : `testsrc2=s=${width}x${height}:r=${fps}:d=${duration.toFixed(3)}`;
  return dark.length > 0 ? `${base},lutyuv=y='val*0.3':enable='${dark.join("+")}'[v]` : `${base}[v]`;
}

export async function generateSpeechSource(spec: SpeechSourceSpec): Promise<SpeechSource> {
  const voices = spec.voices ?? TWO_VOICES;
  const random = rng(spec.seed ?? 1);
  const [gapMin, gapMax] = spec.gapSeconds ?? [0.9, 1.6];
  const work = await mkdtemp(join(tmpdir(), "speech-src-"));
  try {
    const sentences: SpokenSentence[] = [];
    const voiced: Float32Array[] = [];
    let at = spec.leadSeconds ?? 1.5;
    for (const [index, entry] of spec.sentences.entries()) {
      const sentence = typeof entry === "string" ? { text: entry } : entry;
      const voice = sentence.voice ?? voices[index % voices.length]!;
      const emphasised = sentence.emphasised ?? false;
      const samples = await speakSentence(sentence.text, voice, emphasised ? SPEED_EMPHASISED : SPEED_PLAIN, work, `sentence-${index}`);
      // Whole samples, so the span in seconds is exactly where the samples go.
      const startSample = Math.round(at * RATE);
      sentences.push({ text: sentence.text, voice, emphasised, start: startSample / RATE, end: (startSample + samples.length) / RATE });
      voiced.push(samples);
      at = (startSample + samples.length) / RATE + gapMin + random() * (gapMax - gapMin);
    }
    const lastEnd = sentences.at(-1)?.end ?? 0;
    const duration = Math.max(spec.minDurationSeconds ?? 0, lastEnd + (spec.tailSeconds ?? 1.5));
    const total = Math.round(duration * RATE);

    const voice = new Float32Array(total);
    sentences.forEach((s, i) => voice.set(voiced[i]!, Math.round(s.start * RATE)));
    const plain = sentences.filter((s) => !s.emphasised);
    const measured = rms(voice, plain.length > 0 ? plain : sentences);
    const voiceGain = measured > 0 ? dbToGain(REFERENCE_VOICE_DBFS) / measured : 0;
    const mix = new Float32Array(total);
    sentences.forEach((s, i) => {
      const gain = voiceGain * (s.emphasised ? dbToGain(EMPHASIS_DB) : 1);
      const from = Math.round(s.start * RATE);
      voiced[i]!.forEach((v, j) => (mix[from + j] = v * gain));
    });

    let bursts: Interval[] = [];
    if (spec.bed) {
      const seed = spec.seed ?? 1;
      const bed = makeBed(spec.bed.kind, duration, RATE, seed);
      bursts = spec.bed.kind === "applause" ? applauseBursts(duration, seed) : [];
      const bedRms = rms(bed, bursts.length > 0 ? bursts : [{ start: 0, end: duration }]);
      const bedGain = bedRms > 0 ? dbToGain(REFERENCE_VOICE_DBFS - spec.bed.gainDb) / bedRms : 0;
      const swells = spec.bed.swells ?? [];
      for (let i = 0; i < total; i++) {
        const t = i / RATE;
        const swell = swells.some((s) => t >= s.start && t < s.end) ? dbToGain(SWELL_DB) : 1;
        mix[i]! += (bed[i] ?? 0) * bedGain * swell;
      }
    }

    const wavPath = join(work, "mix.wav");
    await writeFile(wavPath, wavFile(mix));
    await mkdir(dirname(spec.outPath), { recursive: true });
    await runTool(process.env.FFMPEG_PATH ?? "ffmpeg", [
      "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
      "-filter_complex", videoFilter(spec, duration),
      "-i", wavPath,
      "-map", "[v]", "-map", "0:a",
      "-c:v", "libx264", "-preset", "ultrafast", "-crf", "28", "-g", "30",
      "-c:a", "aac", "-b:a", "96k", "-ar", "44100",
      "-t", duration.toFixed(3),
      "-movflags", "+faststart",
      spec.outPath,
    ]);
    return { path: spec.outPath, durationSeconds: duration, sentences, bursts };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export async function cachedSpeechSource(spec: Omit<SpeechSourceSpec, "outPath">, dir = ".tmp/media"): Promise<SpeechSource> {
  const key = createHash("sha256").update(JSON.stringify({ VERSION, spec })).digest("hex").slice(0, 16);
  const path = resolve(join(dir, `speech-${key}.mp4`));
  if (existsSync(path) && existsSync(`${path}.json`)) return JSON.parse(await readFile(`${path}.json`, "utf8")) as SpeechSource;
  const partial = partialPath(path);
  const made = await generateSpeechSource({ ...spec, outPath: partial });
  const source = { ...made, path };
  await commitCached(partial, path, source);
  return source;
}

/** Ground truth per frame: 1 where a sentence is sounding. */
export function speechFrames(sentences: Interval[], duration: number, frameSeconds = 0.01): Uint8Array {
  const frames = new Uint8Array(Math.ceil(duration / frameSeconds));
  for (const s of sentences) {
    for (let i = Math.floor(s.start / frameSeconds); i < Math.min(frames.length, Math.ceil(s.end / frameSeconds)); i++) frames[i] = 1;
  }
  return frames;
}
