/**
 * Face reframing judged from rendered clips. Sources are composed from the
 * photographs shipped inside @vladmandic/face-api (helpers/faces-media.ts):
 * the test knows where every face is at every moment. The camera's position
 * is read back from each output frame's top-band ramp (one band per half in
 * a split frame), so what is judged is what the viewer sees.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { analyse } from "../../src/analyse/index.ts";
import { probeSource } from "../../src/source/probe.ts";
import { lookAt } from "../../src/reframe/detector.ts";
import { planReframe, windowFractions, type ReframePlan } from "../../src/reframe/plan.ts";
import { MIN_SHOT_SECONDS } from "../../src/reframe/speaker.ts";
import { renderClip } from "../../src/render/index.ts";
import { outputSize } from "../../src/render/geometry.ts";
import type { Candidate, SourceInfo } from "../../src/shared/types.ts";
import { cameraTrack, cuts, decodeFrames, framedTurns, heldShare, insideWindow, reversals, runs, splitFrames, type DecodedFrames } from "../helpers/faces-judge.ts";
import { compose, conversation, DISTRACTOR, distractorX, faceBoxAt, PEOPLE, type Composition, type Placement, type Turn } from "../helpers/faces-media.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";

const runner = nativeRunner();
const W = 640;
const H = 360;
/** Output frames are judged at this size (9:16) and rate. */
const OUT_W = 180;
const OUT_H = 320;
const HALF = OUT_H / 2;
const JUDGE_FPS = 5;
const SINGLE = windowFractions(9 / 16, W, H).width;
const HALF_WINDOW = windowFractions(OUT_W / HALF, W, H).width;

let dir: string;
beforeAll(async () => {
  dir = await osTempDir("faces");
});
afterAll(removeTempDirs);

async function source(name: string, composition: Composition): Promise<SourceInfo> {
  const file = path.join(dir, `${name}.mp4`);
  await compose(file, composition);
  return probeSource({
    runner,
    path: file,
    sizeBytes: (await stat(file)).size,
    videoUrl: `https://media.test/${name}.mp4`,
    platformTitle: null,
    maxSourceSeconds: 3600,
    signal: new AbortController().signal,
  });
}

function clipOf(seconds: number, activityX = 0.5): Candidate {
  return { start: 0, end: seconds, score: 0.5, reasons: ["test"], crop: [{ fromSeconds: 0, toSeconds: seconds, centerX: activityX, centerY: 0.5 }] };
}

async function planAndRender(
  src: SourceInfo,
  candidate: Candidate,
  overrides: Partial<ClipConfig>,
  name: string,
  speech: { start: number; end: number }[] | null = null,
): Promise<{ plan: ReframePlan; out: DecodedFrames }> {
  const config = ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 60, resolution: 720, aspect_ratio: "9:16", captions: "off", ...overrides });
  const signal = new AbortController().signal;
  const plan = await planReframe({ runner, source: src, candidate, config, output: outputSize(config, src), speech, rawPath: path.join(dir, `${name}.rgb`), signal, onProgress: () => {} });
  const file = path.join(dir, `${name}-out.mp4`);
  await renderClip(runner, { source: src, candidate, config, outPath: file, thumbnailPath: path.join(dir, `${name}.jpg`), signal, onProgress: () => {}, plan });
  return { plan, out: await decodeFrames(file, JUDGE_FPS, OUT_W, OUT_H) };
}

/** The camera's centre (fraction of the source width) in every judged frame of the view starting at output row `top`. */
function cameraOf(src: SourceInfo, out: DecodedFrames, window: number, top = 0, height = OUT_H): Promise<number[]> {
  return cameraTrack({ path: src.path, width: W, height: H }, out, window, top, height);
}

function heldBy(p: Placement, out: DecodedFrames, camera: number[], window: number, when?: (t: number) => boolean): number {
  return heldShare(p, out, camera, window, W, when);
}

describe("reframe: faces", { timeout: 240_000 }, () => {
  it("keeps a walking face in the frame, ignores a larger, faster distractor, holds while the face is lost", async () => {
    const walker: Placement = { person: PEOPLE.anna, width: 130, path: [[0, 30, 110], [4, 450, 150], [7, 450, 150]], hidden: [5, 5.6] };
    const src = await source("walk", { seconds: 7, width: W, height: H, fps: 15, distractor: true, people: [walker] });
    const { plan, out } = await planAndRender(src, clipOf(7), { reframe: "faces" }, "walk");
    expect(plan).toMatchObject({ used: "faces", facesCount: 1 });
    const camera = await cameraOf(src, out, SINGLE);
    const visible = (t: number) => t < 5 || t >= 5.6;
    expect(heldBy(walker, out, camera, SINGLE, visible), `camera ${camera.map((c) => c.toFixed(2)).join(" ")}`).toBeGreaterThanOrEqual(0.95);

    // While the face stands still (from 4 s, including while it is hidden) the camera stands still,
    // though the distractor sweeps the whole frame back and forth.
    const still = out.times.map((t, i) => (t >= 4.4 ? camera[i]! : null)).filter((c): c is number => c !== null);
    expect(Math.max(...still) - Math.min(...still)).toBeLessThan(0.02);
    const distractorSpan = out.times.filter((t) => t >= 4.4).map((t) => (distractorX(t, W) + DISTRACTOR.width / 2) / W);
    expect(Math.max(...distractorSpan) - Math.min(...distractorSpan)).toBeGreaterThan(0.5);
    // The walk goes one way: the camera never turns back.
    expect(reversals(camera, 0.006)).toBe(0);
    // The detector, run on what the viewer sees, finds the face too.
    let seen = 0;
    const shown = out.frames.filter((_, i) => visible(out.times[i]!));
    for (const frame of shown) {
      const look = await lookAt(frame, OUT_W, OUT_H);
      if ((await look.scan(false)).length > 0) seen++;
      look.dispose();
    }
    expect(seen / shown.length).toBeGreaterThanOrEqual(0.9);
  });

  it("layout split: two faces far apart, tilted +25 and -25 degrees, one in each half for the whole clip", async () => {
    const left: Placement = { person: PEOPLE.bea, width: 120, path: [[0, 20, 120], [6, 70, 120]], rotate: 25 };
    const right: Placement = { person: PEOPLE.cara, width: 120, path: [[0, 500, 110], [6, 450, 110]], rotate: -25 };
    const src = await source("pair", { seconds: 6, width: W, height: H, fps: 15, people: [left, right] });
    const { plan, out } = await planAndRender(src, clipOf(6), { reframe: "faces", layout: "split" }, "pair");
    expect(plan).toMatchObject({ used: "faces", facesCount: 2 });
    expect(splitFrames(out).every(Boolean), "every frame split").toBe(true);
    // The left person is on top, the right one below: read from each half's own ramp.
    const top = await cameraOf(src, out, HALF_WINDOW, 0, HALF);
    const bottom = await cameraOf(src, out, HALF_WINDOW, HALF, HALF);
    expect(heldBy(left, out, top, HALF_WINDOW)).toBe(1);
    expect(heldBy(right, out, bottom, HALF_WINDOW)).toBe(1);
  });

  it("follows a face partly covered by a hand", async () => {
    const covered: Placement = { person: PEOPLE.cara, width: 140, path: [[0, 420, 110], [5, 80, 130]], cover: { x: 0.05, y: 0.55, width: 0.9, height: 0.55 } };
    const src = await source("covered", { seconds: 5, width: W, height: H, fps: 15, people: [covered] });
    const { plan, out } = await planAndRender(src, clipOf(5), { reframe: "faces" }, "covered");
    expect(plan).toMatchObject({ used: "faces", facesCount: 1 });
    expect(heldBy(covered, out, await cameraOf(src, out, SINGLE), SINGLE)).toBeGreaterThanOrEqual(0.95);
  });

  it("follows a small face (1/20 of the frame's width) across the frame", async () => {
    // bea's face is about half her cut-out's width: a 64-pixel cut-out holds a 32-pixel face in a 640-pixel frame.
    const small: Placement = { person: PEOPLE.bea, width: 64, path: [[0, 60, 200], [5, 520, 160]] };
    const src = await source("small", { seconds: 5, width: W, height: H, fps: 15, people: [small] });
    const { plan, out } = await planAndRender(src, clipOf(5), { reframe: "faces" }, "small");
    expect(plan).toMatchObject({ used: "faces", facesCount: 1 });
    const camera = await cameraOf(src, out, SINGLE);
    expect(heldBy(small, out, camera, SINGLE)).toBeGreaterThanOrEqual(0.95);
    expect(reversals(camera, 0.006)).toBe(0);
  });

  it("three faces (one coming into a still picture): counts them, frames the most prominent, and stays still", async () => {
    const people: Placement[] = [
      { person: PEOPLE.bea, width: 110, path: [[0, 20, 130]] },
      { person: PEOPLE.dana, width: 170, path: [[0, 240, 90]] },
      { person: PEOPLE.cara, width: 110, path: [[0, 500, 130]], hidden: [0, 1.5] },
    ];
    const src = await source("three", { seconds: 5, width: W, height: H, fps: 15, people });
    const { plan, out } = await planAndRender(src, clipOf(5), { reframe: "auto" }, "three");
    expect(plan).toMatchObject({ used: "faces", facesCount: 3 });
    const camera = await cameraOf(src, out, SINGLE);
    expect(heldBy(people[1]!, out, camera, SINGLE)).toBeGreaterThanOrEqual(0.95);
    expect(Math.max(...camera) - Math.min(...camera)).toBeLessThan(0.02);
  });

  it("no face: falls back to the activity plan and says so", async () => {
    const src = await source("empty", { seconds: 5, width: W, height: H, fps: 15, distractor: true, people: [] });
    const { plan, out } = await planAndRender(src, clipOf(5, 0.3), { reframe: "faces" }, "empty");
    expect(plan).toMatchObject({ used: "activity", facesCount: 0 });
    for (const c of await cameraOf(src, out, SINGLE)) expect(Math.abs(c - 0.3)).toBeLessThan(0.02);
  });

  it("faces below the detector's reach (1/40 of the width): falls back to activity rather than guessing", async () => {
    const tiny: Placement = { person: PEOPLE.anna, width: 32, path: [[0, 100, 200], [5, 500, 200]] };
    const src = await source("tiny", { seconds: 5, width: W, height: H, fps: 15, people: [tiny] });
    const config = ClipConfig.parse({ reframe: "faces", resolution: 720 });
    const plan = await planReframe({ runner, source: src, candidate: clipOf(5, 0.4), config, output: outputSize(config, src), speech: null, rawPath: path.join(dir, "tiny.rgb"), signal: new AbortController().signal, onProgress: () => {} });
    expect(plan).toMatchObject({ used: "activity", facesCount: 0 });
  });

  it("a picture stored rotated (display rotation tag): the face is followed in the upright picture", async () => {
    const walker: Placement = { person: PEOPLE.bea, width: 130, path: [[0, 480, 120], [5, 60, 120], [6, 60, 120]] };
    const src = await source("rotated", { seconds: 6, width: W, height: H, fps: 15, people: [walker], rotated: true });
    expect(src.width).toBe(H);
    const { plan, out } = await planAndRender(src, clipOf(6), { reframe: "auto" }, "rotated");
    expect(plan).toMatchObject({ used: "faces", facesCount: 1 });
    expect(heldBy(walker, out, await cameraOf(src, out, SINGLE), SINGLE)).toBeGreaterThanOrEqual(0.95);
  });
});

describe("reframe: the one who speaks", { timeout: 400_000 }, () => {
  // Two people far apart take turns; each mouth opens and closes with that person's own voice.
  const LONG = [
    "Welcome back to the show, it is good to see you.",
    "Thank you, I am very glad to be here today.",
    "Tell me how the whole project started for you.",
    "It began with a small idea and a lot of coffee.",
    "That sounds like a story worth telling in full.",
  ];
  const QUICK = ["Really?", "Yes.", "Why?", "Because."];
  const FINAL = "Then let us talk about what comes next for you.";
  const people = (mouths: Float32Array[]): Placement[] => [
    { person: PEOPLE.bea, width: 150, path: [[0, 40, 110]], mouth: mouths[0] },
    { person: PEOPLE.cara, width: 150, path: [[0, 450, 110]], mouth: mouths[1] },
  ];
  let src: SourceInfo;
  let turns: Turn[];
  let placements: Placement[];
  let speech: { start: number; end: number }[];

  beforeAll(async () => {
    const lines = [...LONG, ...QUICK, FINAL].map((text, i) => ({ speaker: i % 2, text }));
    const talk = await conversation(lines, ["en-us", "en-gb+f3"], { fps: 15, gap: 0.7, lead: 1, tail: 1 });
    turns = talk.turns;
    placements = people(talk.mouths);
    src = await source("talk", { seconds: talk.seconds, width: W, height: H, fps: 15, audio: talk.audio, people: placements });
    // Where the voices are, as the job has it: the analysis's voice activity (Silero VAD), between its pauses.
    const config = ClipConfig.parse({ min_clip_seconds: 5, max_clip_seconds: 60 });
    await analyse(runner, src, "podcast", config, { signal: new AbortController().signal, onProgress: () => {}, onSpeech: (spans) => (speech = spans) });
    expect(speech.length).toBeGreaterThanOrEqual(5);
  }, 200_000);

  function framed(out: DecodedFrames, camera: number[], split: boolean[]): boolean[] {
    return framedTurns({ turns, placements, out, camera, split, window: SINGLE, sourceWidth: W, shortest: MIN_SHOT_SECONDS, within: 1 });
  }

  it("reframe faces frames the speaking face within 1 s of each turn change, cutting no more often than the minimum shot", async () => {
    const { plan, out } = await planAndRender(src, clipOf(src.durationSeconds), { reframe: "faces" }, "talk-single", speech);
    expect(plan).toMatchObject({ used: "faces", facesCount: 2 });
    const camera = await cameraOf(src, out, SINGLE);
    const split = splitFrames(out);
    expect(split.some(Boolean)).toBe(false);
    const turnsFramed = framed(out, camera, split);
    expect(turnsFramed.filter(Boolean).length / turnsFramed.length, `turns framed: ${turnsFramed.join(" ")}`).toBeGreaterThanOrEqual(0.9);
    // The quick exchange is not cut to pieces: no two cuts closer than the minimum shot (less one judged frame).
    const at = cuts(out.times, camera);
    expect(at.length).toBeGreaterThanOrEqual(LONG.length - 1);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!, `cuts at ${at.join(" ")}`).toBeGreaterThanOrEqual(MIN_SHOT_SECONDS - 1 / JUDGE_FPS);
  });

  it("layout auto shows both, one per half, while they speak in quick turns, and the speaker alone otherwise", async () => {
    const { plan, out } = await planAndRender(src, clipOf(src.durationSeconds), { reframe: "faces", layout: "auto" }, "talk-auto", speech);
    expect(plan.used).toBe("faces");
    const split = splitFrames(out);
    const quick = turns.slice(LONG.length, LONG.length + QUICK.length);
    const during = (t: number) => t >= quick[0]!.start + 0.5 && t < quick.at(-1)!.end;
    const inExchange = out.times.map((t, i) => ({ t, i })).filter(({ t }) => during(t));
    expect(inExchange.every(({ i }) => split[i]), "split through the quick exchange").toBe(true);
    const top = await cameraOf(src, out, HALF_WINDOW, 0, HALF);
    const bottom = await cameraOf(src, out, HALF_WINDOW, HALF, HALF);
    for (const { t, i } of inExchange) {
      expect(insideWindow(faceBoxAt(placements[0]!, t), top[i]!, HALF_WINDOW, W), `left face on top at ${t}`).toBe(true);
      expect(insideWindow(faceBoxAt(placements[1]!, t), bottom[i]!, HALF_WINDOW, W), `right face below at ${t}`).toBe(true);
    }
    const turnsFramed = framed(out, await cameraOf(src, out, SINGLE), split);
    expect(turnsFramed.filter(Boolean).length / turnsFramed.length, `turns framed: ${turnsFramed.join(" ")}`).toBeGreaterThanOrEqual(0.9);
    // No layout lasts less than the minimum shot between two switches (less one judged frame's rounding; the clip's ends may cut the first and last).
    const switches = split.flatMap((s, i) => (i > 0 && s !== split[i - 1] ? [i] : []));
    expect(switches.length, "into the split and out of it").toBeGreaterThanOrEqual(2);
    for (const [from, to] of runs(split.length, switches).slice(1, -1)) {
      expect((to - from) / JUDGE_FPS, `layout ${split[from] ? "split" : "single"} from ${out.times[from]} s; switches at ${switches.map((i) => out.times[i]).join(" ")}`).toBeGreaterThanOrEqual(MIN_SHOT_SECONDS - 1 / JUDGE_FPS);
    }
  });
});
