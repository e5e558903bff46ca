/**
 * Brand settings judged from the rendered clip's pixels, through
 * the engine's own caption preparation and render (one encode each):
 * - caption text colour and highlight colour, measured inside the boxes
 *   where OCR finds the words;
 * - the logo found where the configuration puts it (template match), and
 *   drawn at the configured opacity;
 * - the hook title readable by OCR over the first seconds, gone after.
 * Small pictures (640x360, "original" aspect) and 4 s clips keep it quick.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, type Transcript } from "#contract";
import { placeLogo } from "../../src/brand/logo.ts";
import { prepareClipCaptions } from "../../src/captions/index.ts";
import { probeSource } from "../../src/source/probe.ts";
import { renderClip } from "../../src/render/index.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import type { SourceInfo } from "../../src/shared/types.ts";
import { buildTranscript } from "../../src/transcript/build.ts";
import { FFMPEG, nativeRunner, tempDir } from "../helpers/media.ts";
import { colourCounts, matchTemplate, ncc, ocrBand, rgbFrameAt, rgbImage } from "../helpers/pixels.ts";

const runner = nativeRunner();
const W = 640;
const H = 360;
const BACKGROUND: [number, number, number] = [0x2a, 0x30, 0x40];
const TEXT: [number, number, number] = [0x40, 0xff, 0x40];
const HIGHLIGHT: [number, number, number] = [0xff, 0x40, 0xff];
const hex = ([r, g, b]: [number, number, number]) => `#${[r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("")}`.toUpperCase();

/** Spoken words (source seconds): the page shows all four, each highlighted in turn. */
const WORDS = [
  { text: "Sharp", start: 0.3, end: 0.9 },
  { text: "brand", start: 0.9, end: 1.5 },
  { text: "colours", start: 1.5, end: 2.1 },
  { text: "today.", start: 2.1, end: 2.9 },
];
const norm = (w: string) => w.toLowerCase().replace(/[^a-z]/g, "");

let dir: string;
let source: SourceInfo;
let logoPath: string;
let logoSize: { width: number; height: number };

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-v", "error", "-y", ...args], timeoutMs: 60_000 });
  if (result.exitCode !== 0) throw new Error(result.stderrTail);
}

beforeAll(async () => {
  dir = await tempDir("brand-render");
  const src = path.join(dir, "source.mp4");
  await ffmpeg(["-f", "lavfi", "-i", `color=c=0x${hex(BACKGROUND).slice(1)}:s=${W}x${H}:r=25:d=4`, "-f", "lavfi", "-i", "sine=f=220:d=4", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", src]);
  source = await probeSource({ runner, path: src, sizeBytes: (await stat(src)).size, videoUrl: "https://media.test/brand.mp4", platformTitle: "Brand test", maxSourceSeconds: 3600, signal: new AbortController().signal });
  // A logo with structure to match on: ffmpeg's colour-bar test card.
  logoPath = path.join(dir, "logo.png");
  logoSize = { width: 120, height: 60 };
  await ffmpeg(["-f", "lavfi", "-i", `testsrc=s=${logoSize.width}x${logoSize.height}:r=1`, "-frames:v", "1", logoPath]);
}, 120_000);

async function render(name: string, config: Partial<ClipConfig>, kept?: { start: number; end: number }[]): Promise<{ clip: string; config: ClipConfig; hookTitle: boolean }> {
  const parsed = ClipConfig.parse({ aspect_ratio: "original", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 30, ...config });
  const transcript: Transcript = buildTranscript("captions_url", "en", WORDS);
  const candidate = { start: 0, end: 4, score: 1, reasons: ["test"] };
  const placement = placeLogo(parsed, { width: W, height: H }, logoSize);
  const captions = await prepareClipCaptions({
    transcript,
    config: parsed,
    start: candidate.start,
    end: candidate.end,
    width: W,
    height: H,
    canBurn: true,
    file: (f) => path.join(dir, `${name}-${f}`),
    index: 0,
    hookTop: placement && parsed.logo_position.startsWith("top") ? placement.y + placement.height + 7 : 0,
  });
  const clip = path.join(dir, `${name}.mp4`);
  await renderClip(runner, {
    source,
    candidate,
    config: parsed,
    outPath: clip,
    thumbnailPath: path.join(dir, `${name}.jpg`),
    signal: new AbortController().signal,
    onProgress: () => undefined,
    captionsPath: captions.assPath,
    logo: placement ? { path: logoPath, demuxer: "png_pipe", placement } : null,
    kept,
  });
  return { clip, config: parsed, hookTitle: captions.hookTitle };
}

describe("a clip with brand settings", () => {
  let branded: { clip: string; config: ClipConfig; hookTitle: boolean };
  beforeAll(async () => {
    branded = await render("branded", {
      caption_style: "bold",
      caption_size: 130,
      caption_color: hex(TEXT),
      caption_highlight_color: hex(HIGHLIGHT),
      logo_position: "top-right",
      logo_size: 20,
      logo_opacity: 1,
      hook_title_seconds: 2,
    });
  }, 120_000);

  it("draws the words in the caption colour and the spoken word in the highlight colour", async () => {
    // 1.8 s: "colours" is being said.
    const frame = await rgbFrameAt(branded.clip, 1.8, W, H);
    const words = await ocrBand(branded.clip, 1.8, { top: H / 2, bottom: H }, "eng");
    const judged = new Map<string, Record<string, number>>();
    for (const word of words) {
      const name = norm(word.text);
      if (!WORDS.some((w) => norm(w.text) === name)) continue;
      judged.set(name, colourCounts(frame, word, { text: TEXT, highlight: HIGHLIGHT }));
    }
    // OCR found at least three of the four words, the spoken one among them.
    expect([...judged.keys()].length, JSON.stringify(words.map((w) => w.text))).toBeGreaterThanOrEqual(3);
    expect(judged.has("colours")).toBe(true);
    for (const [name, counts] of judged) {
      if (name === "colours") {
        expect(counts.highlight, `${name}: ${JSON.stringify(counts)}`).toBeGreaterThan(50);
        expect(counts.highlight).toBeGreaterThan(counts.text! * 5);
      } else {
        expect(counts.text, `${name}: ${JSON.stringify(counts)}`).toBeGreaterThan(50);
        expect(counts.text).toBeGreaterThan(counts.highlight! * 5);
      }
    }
  });

  it("puts the logo where the configuration says (template match)", async () => {
    const placement = placeLogo(branded.config, { width: W, height: H }, logoSize)!;
    expect(placement).toMatchObject({ x: W - 128 - 14, y: 14, width: 128, height: 64 });
    const frame = await rgbFrameAt(branded.clip, 3.5, W, H);
    const template = await rgbImage(logoPath, placement.width, placement.height);
    const found = matchTemplate(frame, template, placement, 16);
    expect(found.score).toBeGreaterThan(0.9);
    expect(Math.abs(found.x - placement.x)).toBeLessThanOrEqual(1);
    expect(Math.abs(found.y - placement.y)).toBeLessThanOrEqual(1);
    // Nothing like it in the other top corner.
    expect(ncc(frame, template, 14, 14)).toBeLessThan(0.5);
  });

  it("shows the hook title over the first seconds and not after", async () => {
    expect(branded.hookTitle).toBe(true);
    // Below the logo, above the captions.
    const band = { top: 70, bottom: 180 };
    const during = (await ocrBand(branded.clip, 0.6, band, "eng")).map((w) => norm(w.text));
    expect(during).toEqual(expect.arrayContaining(["sharp", "brand", "colours", "today"]));
    const after = (await ocrBand(branded.clip, 2.6, band, "eng")).map((w) => norm(w.text)).filter((w) => w.length > 2);
    expect(after).toEqual([]);
  });
});

describe("the logo's opacity", () => {
  it("blends the logo with the picture at the configured opacity", async () => {
    const half = await render("half", { captions: "off", logo_position: "bottom-left", logo_size: 20, logo_opacity: 0.5 });
    const placement = placeLogo(half.config, { width: W, height: H }, logoSize)!;
    expect(placement).toMatchObject({ x: 14, y: H - 64 - 14 });
    const frame = await rgbFrameAt(half.clip, 1, W, H);
    const logo = await rgbImage(logoPath, placement.width, placement.height);
    // Each pixel should be half logo, half background; solid it would be the logo, absent the background.
    let errorHalf = 0;
    let errorSolid = 0;
    let errorAbsent = 0;
    let n = 0;
    for (let y = 4; y < placement.height - 4; y++) {
      for (let x = 4; x < placement.width - 4; x++) {
        const f = ((placement.y + y) * W + placement.x + x) * 3;
        const l = (y * placement.width + x) * 3;
        for (let c = 0; c < 3; c++) {
          const seen = frame.data[f + c]!;
          errorHalf += Math.abs(seen - (0.5 * logo.data[l + c]! + 0.5 * BACKGROUND[c]!));
          errorSolid += Math.abs(seen - logo.data[l + c]!);
          errorAbsent += Math.abs(seen - BACKGROUND[c]!);
          n++;
        }
      }
    }
    const [meanHalf, meanSolid, meanAbsent] = [errorHalf / n, errorSolid / n, errorAbsent / n];
    expect(meanHalf, `half ${meanHalf.toFixed(1)}, solid ${meanSolid.toFixed(1)}, absent ${meanAbsent.toFixed(1)}`).toBeLessThan(12);
    expect(meanSolid).toBeGreaterThan(meanHalf * 2);
    expect(meanAbsent).toBeGreaterThan(meanHalf * 2);
  }, 120_000);
});


describe("brand after the removal stage (silence and filler cuts)", () => {
  it("draws the logo on the cut clip, whose length is what was kept", async () => {
    const cut = await render("cut", { captions: "off", logo_position: "bottom-right", logo_size: 20 }, [
      { start: 0, end: 1.5 },
      { start: 2.5, end: 4 },
    ]);
    const probe = await runProcess({ command: "ffprobe", args: ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", cut.clip], timeoutMs: 30_000 });
    expect(Number(probe.stdout.trim())).toBeCloseTo(3, 0);
    const placement = placeLogo(cut.config, { width: W, height: H }, logoSize)!;
    const frame = await rgbFrameAt(cut.clip, 2.2, W, H);
    const found = matchTemplate(frame, await rgbImage(logoPath, placement.width, placement.height), placement, 8);
    expect(found.score).toBeGreaterThan(0.9);
    expect(Math.abs(found.x - placement.x) + Math.abs(found.y - placement.y)).toBeLessThanOrEqual(2);
  }, 120_000);
});
