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
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { commitCached, partialPath } from "./cache.ts";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ESPEAK_RATE, runTool, speakSentence } from "./espeak.ts";

export const NARRATION_VOICES = ["en-us", "en-gb+f3"] as const;
const RATE = ESPEAK_RATE;
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
      spoken.push({ samples: await speakSentence(text, voice, 165, work, `s${i}`), voice, text });
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
    await runTool(process.env.FFMPEG_PATH || "ffmpeg", [
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
  const partial = partialPath(outPath);
  const narration = { ...(await narrate({ ...spec, outPath: partial })), path: outPath };
  await commitCached(partial, outPath, narration);
  return narration;
}
