/**
 * Spoken sentences for generated test media: espeak-ng speaks one sentence
 * into a WAV, and its leading and trailing silence (samples below -54 dBFS) is
 * trimmed, so the sentence's span in a mix is exactly its sound.
 *
 * Shared by test/media/speech.ts (speech over beds) and test/media/narration.ts
 * (narrated scripts with subtitle tracks). Commands are argument arrays, never
 * a shell.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

/** espeak-ng's output rate; every generator mixes at this rate. */
export const ESPEAK_RATE = 22050;
const TRIM_LEVEL = 0.002;

/** Runs a tool to completion; rejects with the tail of its stderr when it fails. */
export function runTool(command: string, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done() : fail(new Error(`${command} exited ${code}: ${stderr}`))));
  });
}

/** Mono 16-bit samples of a WAV's data chunk and its rate (espeak-ng may leave the chunk size unset when streaming). */
function wavSamples(wav: Buffer): { samples: Float32Array; rate: number } {
  let offset = 12;
  let rate = ESPEAK_RATE;
  while (offset + 8 <= wav.length) {
    const id = wav.toString("ascii", offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === "fmt ") rate = wav.readUInt32LE(offset + 12);
    if (id === "data") {
      const end = size === 0 || size === 0xffffffff ? wav.length : Math.min(wav.length, offset + 8 + size);
      const samples = new Float32Array(Math.floor((end - offset - 8) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(offset + 8 + i * 2) / 32768;
      return { samples, rate };
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
  return samples.slice(first, last + 1);
}

/** One sentence spoken by `voice` at `wordsPerMinute`, trimmed to its sound, at ESPEAK_RATE. `dir` holds the WAV as `name`.wav. */
export async function speakSentence(text: string, voice: string, wordsPerMinute: number, dir: string, name: string): Promise<Float32Array> {
  const path = join(dir, `${name}.wav`);
  await runTool("espeak-ng", ["-v", voice, "-s", String(wordsPerMinute), "-w", path, "--", text]);
  const { samples, rate } = wavSamples(await readFile(path));
  if (rate !== ESPEAK_RATE) throw new Error(`espeak-ng wrote ${rate} Hz, expected ${ESPEAK_RATE}`);
  return trimmed(samples);
}
