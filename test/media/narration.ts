/**
 * Sources with real spoken sentences (espeak-ng, two voices) at exactly known
 * times, an optional quiet music bed, and optionally the script embedded as a
 * subtitle track (mov_text), so tests and the demo have speech whose
 * sentences and words are known without a speech-to-text model.
 *
 * API
 *   narrate(spec): Promise<Narration>
 *     Writes an MP4 at spec.outPath; returns each sentence's span (seconds).
 *   cachedNarration(spec, dir = ".tmp/media"): Promise<Narration>
 *     Same, reusing a file made earlier from the same spec.
 *   narrationSrt(sentences): string
 *     The script as SubRip, one cue per sentence (what the track holds).
 *
 * Each sentence is spoken into its own WAV, trimmed to its sound (samples
 * above -54 dBFS) and placed after spec.gapSeconds of pause, so a span is its
 * sound to one sample at 22,050 Hz. The picture is spec.picture (an existing
 * video, copied, whose audio is replaced) or a plain dark
 * background. espeak-ng and ffmpeg (FFMPEG_PATH) must be installed; all
 * commands are argument arrays, never a shell.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

export const NARRATION_VOICES = ["en-us", "en-gb+f3"] as const;
const RATE = 22050;
const TRIM_LEVEL = 0.002;
const VERSION = 1;

export interface NarrationSpec {
  sentences: string[];
  voices?: readonly string[];
  /** Pause after each sentence (seconds); default 0.8. */
  gapSeconds?: number;
  leadSeconds?: number;
  /** The source lasts at least this long (silence or bed after the script). */
  minDurationSeconds?: number;
  /** A soft chord under the speech, this many dB below it (e.g. 18); none when absent. */
  bedDb?: number;
  /** Embed the script as a mov_text subtitle track (language eng). */
  subtitleTrack?: boolean;
  /** Picture from this video, copied (its audio is dropped; it must last as long as the script); default a dark 320x180 background. */
  picture?: string;
  width?: number;
  height?: number;
  outPath: string;
}

export interface NarratedSentence {
  text: string;
  start: number;
  end: number;
  voice: string;
}

export interface Narration {
  path: string;
  durationSeconds: number;
  sentences: NarratedSentence[];
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done() : fail(new Error(`${command} exited ${code}: ${stderr}`))));
  });
}

/** Mono 16-bit samples of a WAV's data chunk (espeak-ng may leave the chunk size unset). */
function wavSamples(wav: Buffer): Float32Array {
  let offset = 12;
  while (offset + 8 <= wav.length) {
    const id = wav.toString("ascii", offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === "data") {
      const end = size === 0 || size === 0xffffffff ? wav.length : Math.min(wav.length, offset + 8 + size);
      const samples = new Float32Array(Math.floor((end - offset - 8) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(offset + 8 + i * 2) / 32768;
      return samples;
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error("espeak-ng wrote a WAV without a data chunk");
}

function trimmed(samples: Float32Array): Float32Array {
  let first = 0;
  while (first < samples.length && Math.abs(samples[first]!) < TRIM_LEVEL) first++;
  let last = samples.length - 1;
  while (last > first && Math.abs(samples[last]!) < TRIM_LEVEL) last--;
  return samples.subarray(first, last + 1);
}

function seconds(t: number): string {
  const ms = Math.round(t * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
}

export function narrationSrt(sentences: NarratedSentence[]): string {
  return `${sentences.map((s, i) => `${i + 1}\n${seconds(s.start)} --> ${seconds(s.end)}\n${s.text}`).join("\n\n")}\n`;
}

export async function narrate(spec: NarrationSpec): Promise<Narration> {
  const voices = spec.voices ?? NARRATION_VOICES;
  const gap = spec.gapSeconds ?? 0.8;
  const work = await mkdtemp(join(tmpdir(), "narration-"));
  try {
    const spoken: { samples: Float32Array; voice: string; text: string }[] = [];
    for (const [i, text] of spec.sentences.entries()) {
      const voice = voices[i % voices.length]!;
      const wav = join(work, `s${i}.wav`);
      await run("espeak-ng", ["-v", voice, "-s", "165", "-w", wav, "--", text]);
      spoken.push({ samples: trimmed(wavSamples(await readFile(wav))), voice, text });
    }
    let at = Math.round((spec.leadSeconds ?? 1) * RATE);
    const sentences: NarratedSentence[] = [];
    const placed: { from: number; samples: Float32Array }[] = [];
    for (const s of spoken) {
      placed.push({ from: at, samples: s.samples });
      sentences.push({ text: s.text, voice: s.voice, start: at / RATE, end: (at + s.samples.length) / RATE });
      at += s.samples.length + Math.round(gap * RATE);
    }
    const total = Math.max(at + RATE, Math.round((spec.minDurationSeconds ?? 0) * RATE));
    const mix = new Float32Array(total);
    for (const p of placed) mix.set(p.samples, p.from);
    if (spec.bedDb !== undefined) {
      // A soft A-minor chord with a slow swell: music-like, steady, below the voices.
      const gain = 0.25 * 10 ** (-spec.bedDb / 20);
      for (let n = 0; n < total; n++) {
        const t = n / RATE;
        const swell = 0.75 + 0.25 * Math.sin(2 * Math.PI * 0.2 * t);
        mix[n]! += gain * swell * (Math.sin(2 * Math.PI * 220 * t) + 0.7 * Math.sin(2 * Math.PI * 261.63 * t) + 0.6 * Math.sin(2 * Math.PI * 329.63 * t)) / 2.3;
      }
    }
    const pcm = Buffer.alloc(total * 2);
    for (let n = 0; n < total; n++) pcm.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(mix[n]! * 32767))), n * 2);
    const raw = join(work, "mix.raw");
    await writeFile(raw, pcm);
    const duration = total / RATE;
    const width = spec.width ?? 320;
    const height = spec.height ?? 180;
    // An existing picture is copied, not re-encoded (it must last as long as the script).
    const picture = spec.picture
      ? ["-i", spec.picture]
      : ["-f", "lavfi", "-i", `color=c=0x203040:s=${width}x${height}:r=15:d=${duration.toFixed(3)}`];
    const subtitles = spec.subtitleTrack ? join(work, "script.srt") : null;
    if (subtitles) await writeFile(subtitles, narrationSrt(sentences));
    await mkdir(dirname(resolve(spec.outPath)), { recursive: true });
    const partial = `${spec.outPath}.part.mp4`;
    await run(process.env.FFMPEG_PATH || "ffmpeg", [
      "-nostdin", "-v", "error", "-y",
      ...picture,
      "-f", "s16le", "-ar", String(RATE), "-ac", "1", "-i", raw,
      ...(subtitles ? ["-f", "srt", "-i", subtitles] : []),
      "-map", "0:v:0", "-map", "1:a:0", ...(subtitles ? ["-map", "2:s:0"] : []),
      "-t", duration.toFixed(3),
      ...(spec.picture ? ["-c:v", "copy"] : ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "30"]),
      "-c:a", "aac", "-b:a", "96k", "-ar", "44100",
      ...(subtitles ? ["-c:s", "mov_text", "-metadata:s:s:0", "language=eng"] : []),
      partial,
    ]);
    await rename(partial, spec.outPath);
    return { path: spec.outPath, durationSeconds: duration, sentences };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export async function cachedNarration(spec: Omit<NarrationSpec, "outPath">, dir = ".tmp/media"): Promise<Narration> {
  const key = createHash("sha256").update(JSON.stringify({ VERSION, ...spec })).digest("hex").slice(0, 16);
  const outPath = resolve(dir, `narration-${key}.mp4`);
  const factsPath = `${outPath}.json`;
  if (existsSync(outPath) && existsSync(factsPath)) return JSON.parse(await readFile(factsPath, "utf8")) as Narration;
  const narration = await narrate({ ...spec, outPath });
  await writeFile(factsPath, JSON.stringify(narration));
  return narration;
}
