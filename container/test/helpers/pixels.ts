/**
 * Judging rendered clips from their pixels: frames as RGB, OCR
 * with word boxes (tesseract's TSV output, any installed language), colour
 * counts inside a box, and template matching by normalised cross-correlation.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { runProcess } from "../../src/shared/spawn.ts";
import { FFMPEG } from "./media.ts";

export interface RgbImage {
  width: number;
  height: number;
  /** rgb24, row by row. */
  data: Uint8Array;
}

async function decode(args: string[], width: number, height: number): Promise<RgbImage> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "pixels-"));
  const out = path.join(dir, "frame.raw");
  try {
    const result = await runProcess({
      command: FFMPEG,
      args: ["-nostdin", "-v", "error", "-y", ...args, "-frames:v", "1", "-vf", `scale=${width}:${height}:flags=lanczos,format=rgb24`, "-f", "rawvideo", out],
      timeoutMs: 30_000,
    });
    if (result.exitCode !== 0) throw new Error(`frame extraction failed: ${result.stderrTail}`);
    return { width, height, data: new Uint8Array(await readFile(out)) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The frame shown at `seconds` into a clip, at the clip's own size. */
export function rgbFrameAt(file: string, seconds: number, width: number, height: number): Promise<RgbImage> {
  return decode(["-ss", seconds.toFixed(3), "-i", file], width, height);
}

/** An image file scaled to width x height (lanczos, as the engine scales a logo). */
export function rgbImage(file: string, width: number, height: number): Promise<RgbImage> {
  return decode(["-i", file], width, height);
}

export interface OcrWord {
  text: string;
  left: number;
  top: number;
  width: number;
  height: number;
  confidence: number;
}

/**
 * OCR of a band of a frame (rows top..bottom), grey and inverted (tesseract
 * reads dark text on light best), scaled up `zoom` times; boxes are given
 * back in frame pixels. Words in reading order, as tesseract gives them.
 */
export async function ocrBand(file: string, seconds: number, band: { top: number; bottom: number }, language: string, zoom = 2): Promise<OcrWord[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "ocr-"));
  const png = path.join(dir, "band.png");
  try {
    const frame = await runProcess({
      command: FFMPEG,
      args: [
        "-nostdin", "-v", "error", "-y", "-ss", seconds.toFixed(3), "-i", file, "-frames:v", "1",
        "-vf", `crop=iw:${band.bottom - band.top}:0:${band.top},scale=iw*${zoom}:ih*${zoom}:flags=lanczos,format=gray,negate`, png,
      ],
      timeoutMs: 30_000,
    });
    if (frame.exitCode !== 0) throw new Error(`frame extraction failed: ${frame.stderrTail}`);
    const ocr = await runProcess({ command: "tesseract", args: [png, "stdout", "--psm", "6", "-l", language, "tsv"], timeoutMs: 120_000 });
    if (ocr.exitCode !== 0) throw new Error(`tesseract failed: ${ocr.stderrTail}`);
    const words: OcrWord[] = [];
    for (const line of ocr.stdout.split("\n").slice(1)) {
      const cols = line.split("\t");
      if (cols.length < 12 || cols[0] !== "5") continue;
      const text = cols[11]!.trim();
      if (text === "") continue;
      words.push({
        text,
        left: Number(cols[6]) / zoom,
        top: Number(cols[7]) / zoom + band.top,
        width: Number(cols[8]) / zoom,
        height: Number(cols[9]) / zoom,
        confidence: Number(cols[10]),
      });
    }
    return words;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Pixels inside the box within `tolerance` (per channel) of each colour. */
export function colourCounts(image: RgbImage, box: Pick<OcrWord, "left" | "top" | "width" | "height">, colours: Record<string, [number, number, number]>, tolerance = 60): Record<string, number> {
  const counts = Object.fromEntries(Object.keys(colours).map((k) => [k, 0])) as Record<string, number>;
  const x0 = Math.max(0, Math.floor(box.left));
  const y0 = Math.max(0, Math.floor(box.top));
  const x1 = Math.min(image.width, Math.ceil(box.left + box.width));
  const y1 = Math.min(image.height, Math.ceil(box.top + box.height));
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * image.width + x) * 3;
      for (const [name, [r, g, b]] of Object.entries(colours)) {
        if (Math.abs(image.data[i]! - r) <= tolerance && Math.abs(image.data[i + 1]! - g) <= tolerance && Math.abs(image.data[i + 2]! - b) <= tolerance) counts[name]! += 1;
      }
    }
  }
  return counts;
}

function grey(image: RgbImage): Float64Array {
  const out = new Float64Array(image.width * image.height);
  for (let i = 0; i < out.length; i++) out[i] = 0.299 * image.data[i * 3]! + 0.587 * image.data[i * 3 + 1]! + 0.114 * image.data[i * 3 + 2]!;
  return out;
}

/** Normalised cross-correlation of the template placed with its top-left corner at (x, y). */
export function ncc(image: RgbImage, template: RgbImage, x: number, y: number): number {
  const g = grey(image);
  const t = grey(template);
  return nccGrey(g, image.width, t, template.width, template.height, x, y);
}

function nccGrey(g: Float64Array, gw: number, t: Float64Array, tw: number, th: number, x: number, y: number): number {
  let sumI = 0;
  let sumT = 0;
  const n = tw * th;
  for (let j = 0; j < th; j++) for (let i = 0; i < tw; i++) {
    sumI += g[(y + j) * gw + x + i]!;
    sumT += t[j * tw + i]!;
  }
  const meanI = sumI / n;
  const meanT = sumT / n;
  let num = 0;
  let varI = 0;
  let varT = 0;
  for (let j = 0; j < th; j++) for (let i = 0; i < tw; i++) {
    const a = g[(y + j) * gw + x + i]! - meanI;
    const b = t[j * tw + i]! - meanT;
    num += a * b;
    varI += a * a;
    varT += b * b;
  }
  return varI === 0 || varT === 0 ? 0 : num / Math.sqrt(varI * varT);
}

/** The best match of the template within `radius` pixels of (x, y): where, and how well. */
export function matchTemplate(image: RgbImage, template: RgbImage, around: { x: number; y: number }, radius: number): { x: number; y: number; score: number } {
  const g = grey(image);
  const t = grey(template);
  let best = { x: around.x, y: around.y, score: -Infinity };
  for (let y = Math.max(0, around.y - radius); y <= Math.min(image.height - template.height, around.y + radius); y++) {
    for (let x = Math.max(0, around.x - radius); x <= Math.min(image.width - template.width, around.x + radius); x++) {
      const score = nccGrey(g, image.width, t, template.width, template.height, x, y);
      if (score > best.score) best = { x, y, score };
    }
  }
  return best;
}
