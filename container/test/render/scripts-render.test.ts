/**
 * Captions in non-Latin scripts, from a supplied captions file
 * through the engine's own parsing, caption layout and render, read back
 * from the clip's pixels with tesseract's language data for each script
 * (Debian tesseract-ocr-chi-sim, -ara, -hin):
 * - Chinese: the characters of each cue, in order (CJK font, no spaces);
 * - Arabic: the words of each cue, in right-to-left reading order, while the
 *   bold style's per-word highlight tags are in the line (they used to split
 *   the right-to-left run: the control case below shows OCR catching that);
 * - Hindi: the words of each cue (Devanagari font and shaping).
 * 640x360 clips of a few seconds.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { prepareClipCaptions } from "../../src/captions/index.ts";
import { probeSource } from "../../src/source/probe.ts";
import { renderClip } from "../../src/render/index.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import type { SourceInfo } from "../../src/shared/types.ts";
import { buildTranscript, wordsFromCues } from "../../src/transcript/build.ts";
import { parseCaptions } from "../../src/transcript/cues.ts";
import { FFMPEG, nativeRunner, tempDir } from "../helpers/media.ts";
import { ocrBand } from "../helpers/pixels.ts";

const runner = nativeRunner();
const W = 640;
const H = 360;
const SECONDS = 6;

interface Script {
  name: string;
  tesseract: string;
  cues: string[];
}

const CHINESE: Script = { name: "chinese", tesseract: "chi_sim", cues: ["今天天气很好。", "我们一起去公园散步。"] };
const ARABIC: Script = { name: "arabic", tesseract: "ara", cues: ["مرحبا بكم في البرنامج", "نتحدث اليوم عن الطقس"] };
const HINDI: Script = { name: "hindi", tesseract: "hin", cues: ["आज मौसम बहुत अच्छा है", "हम पार्क में टहलने चलेंगे"] };

/** Cue i spans [start, end) in seconds. */
const cueTimes = (i: number) => ({ start: 0.2 + i * 2.8, end: 0.2 + i * 2.8 + 2.6 });

function srt(cues: string[]): string {
  const stamp = (s: number) => `00:00:0${Math.floor(s)},${String(Math.round((s % 1) * 1000)).padStart(3, "0")}`;
  return cues.map((text, i) => `${i + 1}\n${stamp(cueTimes(i).start)} --> ${stamp(cueTimes(i).end)}\n${text}\n`).join("\n");
}

let dir: string;
let source: SourceInfo;

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-v", "error", "-y", ...args], timeoutMs: 60_000 });
  if (result.exitCode !== 0) throw new Error(result.stderrTail);
}

beforeAll(async () => {
  dir = await tempDir("scripts-render");
  const src = path.join(dir, "source.mp4");
  await ffmpeg(["-f", "lavfi", "-i", `color=c=0x303848:s=${W}x${H}:r=25:d=${SECONDS}`, "-f", "lavfi", "-i", `sine=f=220:d=${SECONDS}`, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", src]);
  source = await probeSource({ runner, path: src, sizeBytes: (await stat(src)).size, videoUrl: "https://media.test/s.mp4", platformTitle: null, maxSourceSeconds: 3600, signal: new AbortController().signal });
}, 60_000);

const rendered = new Map<string, Promise<{ clip: string; ass: string }>>();

/** The supplied file, parsed and captioned as a captions_url job does, burned in style bold (highlight tags); once per script. */
function renderScript(script: Script): Promise<{ clip: string; ass: string }> {
  if (!rendered.has(script.name)) rendered.set(script.name, renderOnce(script));
  return rendered.get(script.name)!;
}

async function renderOnce(script: Script): Promise<{ clip: string; ass: string }> {
  const file = path.join(dir, `${script.name}.srt`);
  await writeFile(file, srt(script.cues), "utf8");
  const { cues } = parseCaptions(await readFile(file, "utf8"));
  const transcript = buildTranscript("captions_url", null, wordsFromCues(cues, SECONDS));
  const config = ClipConfig.parse({ aspect_ratio: "original", resolution: 720, captions: "both", caption_style: "bold", caption_size: 140, caption_position: "center" });
  const candidate = { start: 0, end: SECONDS, score: 1, reasons: ["test"] };
  const captions = await prepareClipCaptions({ transcript, config, start: 0, end: SECONDS, width: W, height: H, canBurn: true, file: (f) => path.join(dir, `${script.name}-${f}`), index: 0 });
  expect(captions.assPath).not.toBeNull();
  const clip = path.join(dir, `${script.name}.mp4`);
  await renderClip(runner, { source, candidate, config, outPath: clip, thumbnailPath: path.join(dir, `${script.name}.jpg`), signal: new AbortController().signal, onProgress: () => undefined, captionsPath: captions.assPath });
  return { clip, ass: await readFile(captions.assPath!, "utf8") };
}

/** Mid-cue, when a word after the first is highlighted (the tags sit inside the line). */
const readAt = (i: number) => cueTimes(i).start + (cueTimes(i).end - cueTimes(i).start) * 0.6;
const band = { top: Math.round(H * 0.3), bottom: Math.round(H * 0.7) };

/** Longest common subsequence length: how much of `expected` was read, in order. */
function inOrder(expected: string[], read: string[]): number {
  const table = Array.from({ length: expected.length + 1 }, () => new Array<number>(read.length + 1).fill(0));
  for (let i = 1; i <= expected.length; i++) {
    for (let j = 1; j <= read.length; j++) {
      table[i]![j] = expected[i - 1] === read[j - 1] ? table[i - 1]![j - 1]! + 1 : Math.max(table[i - 1]![j]!, table[i]![j - 1]!);
    }
  }
  return table[expected.length]![read.length]!;
}

const letters = (text: string) => [...text.replace(/[\p{P}\s]/gu, "")];

describe("captions in non-Latin scripts", () => {
  it("Chinese: a CJK font, and OCR reads each cue's characters in order", async () => {
    const { clip, ass } = await renderScript(CHINESE);
    expect(ass).toMatch(/^Style: Caption,Noto Sans CJK SC,/m);
    for (const [i, cue] of CHINESE.cues.entries()) {
      const read = letters((await ocrBand(clip, readAt(i), band, CHINESE.tesseract)).map((w) => w.text).join(""));
      const expected = letters(cue);
      const matched = inOrder(expected, read);
      console.log(`chinese cue ${i}: expected ${expected.join("")}, read ${read.join("")} (${matched}/${expected.length})`);
      expect(matched / expected.length).toBeGreaterThanOrEqual(0.8);
    }
  }, 120_000);

  it("Arabic: an Arabic font, and OCR reads each cue's words in right-to-left order with the highlight in the line", async () => {
    const { clip, ass } = await renderScript(ARABIC);
    expect(ass).toMatch(/^Style: Caption,Noto Sans Arabic,/m);
    // The highlight tags are inside the Arabic lines.
    expect(ass).toMatch(/مرحبا \{\\c&H[0-9A-F]{6}&\}بكم\{\\c&H[0-9A-F]{6}&\} في/);
    for (const [i, cue] of ARABIC.cues.entries()) {
      const words = cue.split(" ");
      const read = (await ocrBand(clip, readAt(i), band, ARABIC.tesseract)).map((w) => w.text);
      const matched = inOrder(words, read);
      console.log(`arabic cue ${i}: expected ${words.join(" ")}, read ${read.join(" ")} (${matched}/${words.length} in order)`);
      expect(matched).toBeGreaterThanOrEqual(words.length - 1);
    }
  }, 120_000);

  it("Arabic, control: the same page without whole-event bidi (libass's VSFilter mode) reads out of order", async () => {
    // What the engine wrote before the fix: Encoding 1, so libass orders the runs between the tags left to right.
    const { ass } = await renderScript(ARABIC);
    const broken = ass.replace(/,-1$/gm, ",1");
    const assPath = path.join(dir, "arabic-vsfilter.ass");
    await writeFile(assPath, broken, "utf8");
    const frame = path.join(dir, "arabic-vsfilter.mp4");
    await ffmpeg(["-f", "lavfi", "-i", `color=c=0x303848:s=${W}x${H}:r=25:d=${SECONDS}`, "-vf", `ass=${assPath}`, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", frame]);
    const words = ARABIC.cues[0]!.split(" ");
    // Mid-cue the second word is highlighted: runs "مرحبا ", "بكم", " في البرنامج".
    const at = cueTimes(0).start + 0.9;
    const read = (await ocrBand(frame, at, band, ARABIC.tesseract)).map((w) => w.text);
    console.log(`arabic control: read ${read.join(" ")}`);
    expect(inOrder(words, read)).toBeLessThan(words.length - 1);
  }, 120_000);

  it("Hindi: a Devanagari font, and OCR reads each cue's words", async () => {
    const { clip, ass } = await renderScript(HINDI);
    expect(ass).toMatch(/^Style: Caption,Noto Sans Devanagari,/m);
    for (const [i, cue] of HINDI.cues.entries()) {
      const words = cue.split(" ");
      const read = (await ocrBand(clip, readAt(i), band, HINDI.tesseract)).map((w) => w.text);
      const matched = inOrder(words, read);
      console.log(`hindi cue ${i}: expected ${words.join(" ")}, read ${read.join(" ")} (${matched}/${words.length})`);
      expect(matched / words.length).toBeGreaterThanOrEqual(0.8);
    }
  }, 120_000);
});
