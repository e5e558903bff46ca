/**
 * A steady two-person podcast, judged from the rendered frames: two people
 * seated far apart (too far for one 9:16 frame), taking turns with their own
 * espeak-ng voices and mouths. With `reframe: faces` the camera is on the
 * speaker, cuts about once a turn, never holds a shot shorter than the
 * minimum and is still between cuts.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { analyse } from "../../src/analyse/index.ts";
import { probeSource } from "../../src/source/probe.ts";
import { planReframe, windowFractions } from "../../src/reframe/plan.ts";
import { MIN_SHOT_SECONDS } from "../../src/reframe/speaker.ts";
import { renderClip } from "../../src/render/index.ts";
import { outputSize } from "../../src/render/geometry.ts";
import type { Candidate, SourceInfo } from "../../src/shared/types.ts";
import { cameraTrack, cuts, decodeFrames, insideWindow, runs, splitFrames, type DecodedFrames } from "../helpers/faces-judge.ts";
import { compose, conversation, faceBoxAt, PEOPLE, type Placement, type Turn } from "../helpers/faces-media.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";

const runner = nativeRunner();
const W = 640;
const H = 360;
const OUT_W = 180;
const OUT_H = 320;
const JUDGE_FPS = 5;
const SINGLE = windowFractions(9 / 16, W, H).width;
/** Camera centres (fraction of the source width) closer than this are the same position: the gauge's reading noise. */
const STILL = 0.01;

/** Alternating turns of a few seconds each, as a podcast has them, with one quick exchange (turns shorter than a shot) in the middle. */
const LINES = [
  "Welcome back to the show, it is really good to have you with us today.",
  "Thank you for having me, I have wanted to come on for a long time.",
  "Tell me how the whole project started, and who was there at the beginning.",
  "It began with a small idea in a garage, two friends and far too much coffee.",
  "That sounds like a story worth telling from the very first day onwards.",
  "Really?",
  "Yes.",
  "Why?",
  "Because.",
  "What was the hardest part of those first few months for the two of you?",
  "Finding people who believed in the idea as much as we did, without a doubt.",
  "And how did you find them in the end, if you ever did find them at all?",
];

let dir: string;
let src: SourceInfo;
let turns: Turn[];
let placements: Placement[];
let speech: { start: number; end: number }[];

beforeAll(async () => {
  dir = await osTempDir("faces-podcast");
  const talk = await conversation(LINES.map((text, i) => ({ speaker: i % 2, text })), ["en-us", "en-gb+f3"], { fps: 15, gap: 0.7, lead: 1, tail: 1 });
  turns = talk.turns;
  placements = [
    { person: PEOPLE.bea, width: 150, path: [[0, 40, 110]], mouth: talk.mouths[0] },
    { person: PEOPLE.cara, width: 150, path: [[0, 450, 110]], mouth: talk.mouths[1] },
  ];
  const file = path.join(dir, "podcast.mp4");
  await compose(file, { seconds: talk.seconds, width: W, height: H, fps: 15, audio: talk.audio, people: placements });
  src = await probeSource({ runner, path: file, sizeBytes: (await stat(file)).size, videoUrl: "https://media.test/podcast.mp4", platformTitle: null, maxSourceSeconds: 3600, signal: new AbortController().signal });
  // Where the voices are, as the job has it: the analysis's voice activity.
  const config = ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 90 });
  await analyse(runner, src, "podcast", config, { signal: new AbortController().signal, onProgress: () => {}, onSpeech: (spans) => (speech = spans) });
  expect(turns.filter((t) => t.end - t.start >= MIN_SHOT_SECONDS).length, "the long turns last a shot or more").toBe(LINES.length - 4);
}, 300_000);
afterAll(removeTempDirs);

async function rendered(layout: "single"): Promise<DecodedFrames> {
  const config = ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 90, resolution: 720, aspect_ratio: "9:16", captions: "off", reframe: "faces", layout });
  const candidate: Candidate = { start: 0, end: src.durationSeconds, score: 0.5, reasons: ["test"], crop: [{ fromSeconds: 0, toSeconds: src.durationSeconds, centerX: 0.5, centerY: 0.5 }] };
  const signal = new AbortController().signal;
  const plan = await planReframe({ runner, source: src, candidate, config, output: outputSize(config, src), speech, rawPath: path.join(dir, `${layout}.rgb`), signal, onProgress: () => {} });
  expect(plan).toMatchObject({ used: "faces", facesCount: 2 });
  const file = path.join(dir, `${layout}-out.mp4`);
  await renderClip(runner, { source: src, candidate, config, outPath: file, thumbnailPath: path.join(dir, `${layout}.jpg`), signal, onProgress: () => {}, plan });
  return decodeFrames(file, JUDGE_FPS, OUT_W, OUT_H);
}


describe("reframe faces: a steady two-person podcast", { timeout: 400_000 }, () => {
  it("frames the speaker through each turn, cuts about once a turn, never for less than a shot, and holds still between cuts", async () => {
    const out = await rendered("single");
    const camera = await cameraTrack({ path: src.path, width: W, height: H }, out, SINGLE);
    expect(splitFrames(out).some(Boolean), "layout single never splits").toBe(false);

    // On the speaker for at least 90% of each turn a shot or longer, counted from 1 s after it starts.
    const long = turns.filter((t) => t.end - t.start >= MIN_SHOT_SECONDS);
    const shares = long.map((turn) => {
      const judged = out.times.map((t, i) => ({ t, i })).filter(({ t }) => t >= turn.start + 1 && t < turn.end);
      const held = judged.filter(({ t, i }) => insideWindow(faceBoxAt(placements[turn.speaker]!, t), camera[i]!, SINGLE, W)).length;
      return judged.length > 0 ? held / judged.length : 0;
    });
    for (const [i, share] of shares.entries()) expect(share, `turn ${i} (${long[i]!.start.toFixed(1)}-${long[i]!.end.toFixed(1)} s) on its speaker; shares ${shares.map((s) => s.toFixed(2)).join(" ")}`).toBeGreaterThanOrEqual(0.9);

    // No more cuts than turns + 10%, and no shot shorter than the minimum (less one judged frame's rounding).
    const at = cuts(out.times, camera);
    expect(at.length, `cuts at ${at.join(" ")}`).toBeLessThanOrEqual(Math.floor(turns.length * 1.1));
    expect(at.length, "a cut at each change of speaker between long turns (the first speaker may be framed from the start)").toBeGreaterThanOrEqual(long.length - 2);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!, `cuts at ${at.join(" ")}`).toBeGreaterThanOrEqual(MIN_SHOT_SECONDS - 1 / JUDGE_FPS);

    // No jitter: between two cuts the seated speaker is still, and so is the camera.
    const changes = camera.flatMap((c, i) => (i > 0 && Math.abs(c - camera[i - 1]!) > 0.15 ? [i] : []));
    for (const [from, to] of runs(camera.length, changes)) {
      const shot = camera.slice(from, to);
      expect(Math.max(...shot) - Math.min(...shot), `camera still from ${out.times[from]} s to ${out.times[to - 1]} s`).toBeLessThanOrEqual(STILL);
    }
  });
});
