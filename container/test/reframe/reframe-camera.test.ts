import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { followAxis, type Observation } from "../../src/reframe/camera.ts";
import { movingCrop, pathExpression, reframeGraph } from "../../src/reframe/filter.ts";
import type { FaceBox } from "../../src/reframe/detector.ts";
import { constantPath, pathAt, type PathPoint, type Span } from "../../src/reframe/path.ts";
import { MAX_PATH_SEGMENTS, planFromTracks, sceneStarts } from "../../src/reframe/plan.ts";
import { MIN_SHOT_SECONDS, speakerShots, type MouthSeries } from "../../src/reframe/speaker.ts";
import { facesCount, sceneOf, type Track } from "../../src/reframe/tracker.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import { FFMPEG } from "../helpers/media.ts";

/** The camera's position at t from its simplified points. */
function at(points: PathPoint[], t: number): number {
  return pathAt(points.slice(1).map((p, i) => ({ from: points[i]!.t, to: p.t, x0: points[i]!.v, x1: p.v, y0: 0, y1: 0 })), t).x;
}

function positions(points: PathPoint[], from: number, to: number, step = 0.05): number[] {
  const out: number[] = [];
  for (let t = from; t <= to + 1e-9; t += step) out.push(at(points, t));
  return out;
}

/** Direction changes among steps larger than `noise`. */
function reversals(values: number[], noise = 1e-4): number {
  let last = 0;
  let count = 0;
  for (let i = 1; i < values.length; i++) {
    const d = values[i]! - values[i - 1]!;
    if (Math.abs(d) <= noise) continue;
    const sign = Math.sign(d);
    if (last !== 0 && sign !== last) count++;
    last = sign;
  }
  return count;
}

const WINDOW = 0.316; // a 9:16 window in a 16:9 frame

function observations(fn: (t: number) => number | null, seconds: number, fps = 3, half = 0.05): Observation[] {
  const out: Observation[] = [];
  for (let i = 0; i <= seconds * fps; i++) {
    const t = i / fps;
    const c = fn(t);
    if (c !== null) out.push({ t, center: c, half });
  }
  return out;
}

describe("virtual camera (one axis)", () => {
  it("stands still while a still face's detections jitter inside the dead zone", () => {
    const jitter = [0, 0.012, -0.009, 0.006, -0.013, 0.01, -0.004];
    const points = followAxis(observations((t) => 0.6 + jitter[Math.round(t * 3) % jitter.length]!, 8), 0, 8, { window: WINDOW });
    const values = positions(points, 0, 8);
    expect(Math.max(...values) - Math.min(...values)).toBe(0);
  });

  it("follows a walk with limited speed and acceleration, without reversing, and settles", () => {
    // Walks from 0.2 to 0.75 in 4 s, then stands.
    const walk = (t: number) => 0.2 + 0.55 * Math.min(1, t / 4);
    const points = followAxis(observations(walk, 8), 0, 8, { window: WINDOW });
    const values = positions(points, 0, 8, 1 / 15);
    expect(reversals(values)).toBe(0);
    const speeds = values.slice(1).map((v, i) => Math.abs(v - values[i]!) * 15);
    expect(Math.max(...speeds)).toBeLessThanOrEqual(WINDOW * 1.0 + 1e-3);
    const accelerations = speeds.slice(1).map((s, i) => Math.abs(s - speeds[i]!) * 15);
    // The simplified path joins straight pieces: allow the slack of one simplification tolerance.
    expect(Math.max(...accelerations)).toBeLessThan(WINDOW * 2.5 * 2.5);
    // The face is never outside the window.
    for (let t = 0; t <= 8; t += 0.1) expect(Math.abs(walk(t) - at(points, t))).toBeLessThanOrEqual(WINDOW / 2 - 0.05 + 1e-6);
    // Standing still at the end: the camera has stopped on the face.
    expect(at(points, 7)).toBeCloseTo(at(points, 8), 6);
    expect(Math.abs(at(points, 8) - 0.75)).toBeLessThan(WINDOW * 0.12);
  });

  it("holds its position while the face is briefly lost", () => {
    // Seen at 0.3 until 3 s, lost for 1.5 s, then seen again at 0.3.
    const points = followAxis(observations((t) => (t > 3 && t < 4.5 ? null : 0.3), 8), 0, 8, { window: WINDOW });
    const values = positions(points, 0, 8);
    expect(Math.max(...values) - Math.min(...values)).toBe(0);
  });

  it("does not glide across a long loss: it holds, then moves once the face is seen again", () => {
    const points = followAxis(observations((t) => (t < 2 ? 0.3 : t < 5 ? null : 0.7), 8), 0, 8, { window: WINDOW });
    expect(at(points, 2)).toBeCloseTo(at(points, 4.5), 6);
    expect(at(points, 8)).toBeGreaterThan(0.6);
  });

  it("cuts with a face that jumped: the face is inside the window before and after, never a pan across", () => {
    // Seen at 0.2 up to 2.25 s, then (a jump marked by the tracker) at 0.8 from 2.5 s.
    const obs = observations((t) => (t < 2.4 ? 0.2 : 0.8), 6, 4).map((o) => (o.t === 2.5 ? { ...o, cut: true } : o));
    const points = followAxis(obs, 0, 6, { window: WINDOW });
    const inside = (t: number, face: number) => Math.abs(at(points, t) - face) <= WINDOW / 2 - 0.05;
    for (let t = 0; t < 2.45; t += 0.05) expect(inside(t, 0.2), `t=${t.toFixed(2)} camera ${at(points, t).toFixed(3)}`).toBe(true);
    // The camera moves in steps of 1/15 s: one step after the jump it is there.
    for (let t = 2.5 + 1 / 15; t <= 6; t += 0.05) expect(inside(t, 0.8), `t=${t.toFixed(2)} camera ${at(points, t).toFixed(3)}`).toBe(true);
  });

  it("a full-width window never moves", () => {
    expect(followAxis(observations((t) => t / 8, 8), 0, 8, { window: 1 })).toEqual([{ t: 0, v: 0.5 }, { t: 8, v: 0.5 }]);
  });
});

function face(x: number, y = 0.3, size = 0.1): FaceBox {
  return { x: x - size / 2, y: y - size / 2, width: size, height: size, score: 0.9 };
}

/** Tracks as the tracker leaves them: one per person (`who` names them), every sample a sighting. */
function tracksOf(samples: { t: number; faces: { who: number; box: FaceBox; mouth?: number }[] }[], sceneStarts = [0]): Track[] {
  const tracks = new Map<string, Track>();
  for (const sample of samples) {
    const scene = sceneOf(sceneStarts, sample.t);
    for (const { who, box, mouth } of sample.faces) {
      const key = `${scene}:${who}`;
      const track = tracks.get(key) ?? { id: tracks.size, scene, points: [], weight: 0, sightings: 0 };
      tracks.set(key, track);
      track.points.push({ t: sample.t, box, detected: true, mouth });
      track.weight += box.width * box.height * box.score;
      track.sightings++;
    }
  }
  return [...tracks.values()];
}

function timesOf(seconds: number, fps = 4): number[] {
  return Array.from({ length: Math.round(seconds * fps) }, (_, i) => i / fps);
}

describe("reframe plan from tracks", () => {
  const frame = { width: 640, height: 360 };
  const output = { width: 720, height: 1280 };
  const twoScenes = { start: 10, end: 18, score: 0.5, reasons: ["x"], crop: [{ fromSeconds: 10, toSeconds: 14, centerX: 0.2, centerY: 0.5 }, { fromSeconds: 14, toSeconds: 18, centerX: 0.8, centerY: 0.5 }] };
  const oneScene = { ...twoScenes, end: 14, crop: twoScenes.crop.slice(0, 1) };
  const plan = (samples: Parameters<typeof tracksOf>[0], candidate: typeof twoScenes, layout: "single" | "split" | "auto" = "single", speech: Span[] | null = null) =>
    planFromTracks({ tracks: tracksOf(samples, sceneStarts(candidate)), times: samples.map((s) => s.t), frame, candidate, config: { layout }, output, speech });

  it("cuts (does not pan) at a scene change", () => {
    const result = plan(timesOf(8).map((t) => ({ t, faces: [{ who: 0, box: face(t < 4 ? 0.25 : 0.8) }] })), twoScenes);
    expect(result.used).toBe("faces");
    expect(Math.abs(pathAt(result.views.single, 3.99).x - 0.25)).toBeLessThan(0.04);
    expect(Math.abs(pathAt(result.views.single, 4).x - 0.8)).toBeLessThan(0.04);
  });

  it("scenes without a face keep the activity centre; no face at all falls back to activity", () => {
    const samples = timesOf(8).map((t) => ({ t, faces: t < 4 ? [{ who: 0, box: face(0.6) }] : [] }));
    expect(pathAt(plan(samples, twoScenes).views.single, 6).x).toBeCloseTo(0.8, 6);
    expect(plan(samples.map((s) => ({ ...s, faces: [] })), twoScenes)).toMatchObject({ used: "activity", facesCount: 0 });
  });

  it("a single stray detection is not a person", () => {
    const samples = timesOf(4).map((t) => ({ t, faces: t === 1 ? [{ who: 0, box: face(0.7) }] : [] }));
    expect(plan(samples, oneScene).used).toBe("activity");
  });

  it("split puts the left person on top and the right one below for the whole clip; one person stays single", () => {
    const samples = timesOf(4).map((t) => ({ t, faces: [{ who: 0, box: face(0.8) }, { who: 1, box: face(0.15) }] }));
    const split = plan(samples, oneScene, "split");
    expect(split.facesCount).toBe(2);
    expect(split.views.split?.during).toEqual([{ from: 0, to: Number.POSITIVE_INFINITY }]);
    expect(Math.abs(pathAt(split.views.split!.top, 2).x - 0.15)).toBeLessThan(0.2);
    expect(Math.abs(pathAt(split.views.split!.bottom, 2).x - 0.8)).toBeLessThan(0.2);
    const alone = plan(samples.map((s) => ({ ...s, faces: s.faces.slice(0, 1) })), oneScene, "split");
    expect(alone.views.split).toBeUndefined();
  });

  it("split shows the pair only in the scenes that have two people; a scene of one is single", () => {
    const samples = timesOf(8).map((t) => ({ t, faces: t < 4 ? [{ who: 0, box: face(0.8) }, { who: 1, box: face(0.15) }] : [{ who: 0, box: face(0.6) }] }));
    const result = plan(samples, twoScenes, "split");
    expect(result.views.split?.during).toEqual([{ from: 0, to: 4 }]);
    expect(Math.abs(pathAt(result.views.single, 6).x - 0.6)).toBeLessThan(0.05);
  });

  it("counts a person present between looks at them, but not one seen at a single time or long gone", () => {
    const box = face(0.5);
    const track = (id: number, times: number[]): Track => ({ id, scene: 0, weight: 1, sightings: times.length, points: times.map((t) => ({ t, box, detected: true })) });
    // Two still faces looked at every 0.75 s; a third found at 4 and 4.25: three together at 4 and 4.25.
    const still = [track(0, [0, 0.75, 1.5, 2.25, 3, 3.75, 4.5]), track(1, [0, 0.75, 1.5, 2.25, 3, 3.75, 4.5])];
    expect(facesCount([...still, track(2, [4, 4.25])])).toBe(3);
    // One who left (last seen at 1) and one who came (from 3): never two at once.
    expect(facesCount([track(0, [0, 0.5, 1]), track(1, [3, 3.5, 4])])).toBe(1);
    expect(facesCount([])).toBe(0);
  });

  it("frames two people together when they fit the window", () => {
    const samples = timesOf(4).map((t) => ({ t, faces: [{ who: 0, box: face(0.45, 0.3, 0.06) }, { who: 1, box: face(0.58, 0.3, 0.06) }] }));
    expect(Math.abs(pathAt(plan(samples, oneScene).views.single, 2).x - 0.515)).toBeLessThan(0.03);
  });

  it("two people apart: frames the one whose mouth moves while a voice is heard, cutting at the turn", () => {
    // Person 0 (left) talks 0.5-3.5 s, person 1 (right) 4-7.5 s; talking mouths open and close, quiet ones stay shut.
    const speech = [{ from: 0.5, to: 3.5 }, { from: 4, to: 7.5 }];
    const talking = (who: number, t: number) => speech[who]!.from <= t && t < speech[who]!.to;
    const samples = timesOf(8).map((t, i) => ({
      t,
      faces: [0, 1].map((who) => ({ who, box: face(who === 0 ? 0.15 : 0.85), mouth: 0.02 + (talking(who, t) ? 0.03 * (i % 2) + 0.01 : 0) })),
    }));
    const result = plan(samples, { ...twoScenes, end: 18, crop: [{ fromSeconds: 10, toSeconds: 18, centerX: 0.5, centerY: 0.5 }] }, "single", speech);
    expect(result.facesCount).toBe(2);
    expect(Math.abs(pathAt(result.views.single, 2).x - 0.15)).toBeLessThan(0.05);
    expect(Math.abs(pathAt(result.views.single, 3.99).x - 0.15)).toBeLessThan(0.05);
    expect(Math.abs(pathAt(result.views.single, 4.01).x - 0.85)).toBeLessThan(0.05);
    expect(result.views.split).toBeUndefined();
  });
});

describe("active speaker", () => {
  /** Mouths sampled at 4 per second over `seconds`: the speaker's opens and closes, everyone else's stays at rest (plus jitter). */
  function mouths(turns: { who: number; from: number; to: number }[], people: number, seconds: number, extra?: (who: number, t: number) => number, fps = 4): MouthSeries[] {
    let seed = 7;
    const jitter = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.004;
    return Array.from({ length: people }, (_, who) => {
      const times = timesOf(seconds, fps);
      const open = times.map((t, i) => {
        const talking = turns.some((turn) => turn.who === who && t >= turn.from && t < turn.to);
        return 0.015 + jitter() + (talking ? [0.03, 0.005, 0.045, 0.015][i % 4]! : 0) + (extra?.(who, t) ?? 0);
      });
      return { id: who, times, open };
    });
  }
  const turns = [
    { who: 0, from: 0.6, to: 3.1 },
    { who: 1, from: 3.8, to: 6.4 },
    { who: 0, from: 7.0, to: 9.3 },
    { who: 1, from: 9.9, to: 12.5 },
  ];
  const speech = turns.map((t) => ({ from: t.from, to: t.to }));

  it("switches at each turn, where the new voice starts", () => {
    const shots = speakerShots({ people: mouths(turns, 2, 13), speech, from: 0, to: 13, splitWhenBoth: false })!;
    expect(shots.map((s) => s.speaker)).toEqual([0, 1, 0, 1]);
    expect(shots.slice(1).map((s) => s.from)).toEqual([3.8, 7.0, 9.9]);
    expect(shots[0]!.from).toBe(0);
    expect(shots.at(-1)!.to).toBe(13);
  });

  it("a mouth that moves while nobody speaks (chewing) does not take the turn from the one speaking", () => {
    // Person 2 chews all the time; what they do in silence is their noise.
    const chew = (who: number, t: number) => (who === 2 ? [0.02, 0, 0.015, 0.005][Math.round(t * 4) % 4]! : 0);
    const shots = speakerShots({ people: mouths(turns, 3, 13, chew), speech, from: 0, to: 13, splitWhenBoth: false })!;
    expect(shots.map((s) => s.speaker)).toEqual([0, 1, 0, 1]);
  });

  it("a mouth that moves as much as a speaker's, in silence as in speech, is noise and never takes a turn", () => {
    // Two turns, a long silence, two turns: person 2 chews like a speaker talks, all the time.
    const spaced = [
      { who: 0, from: 0.5, to: 3.0 },
      { who: 1, from: 3.6, to: 6.0 },
      { who: 0, from: 10.0, to: 12.5 },
      { who: 1, from: 13.1, to: 15.5 },
    ];
    const chew = (who: number, t: number) => (who === 2 ? [0.03, 0.005, 0.045, 0.015][Math.round(t * 4) % 4]! : 0);
    const shots = speakerShots({ people: mouths(spaced, 3, 16, chew), speech: spaced.map((t) => ({ from: t.from, to: t.to })), from: 0, to: 16, splitWhenBoth: false })!;
    expect(shots.map((s) => s.speaker)).toEqual([0, 1, 0, 1]);
  });

  it("a speaker whose mouth opens before the voice starts and closes after it ends keeps each turn", () => {
    // Short gaps between turns, as in a brisk conversation, and mouths looked at twice a second, as the tracker
    // does. Person 0's mouth opens 0.5 s before each of their turns and closes 0.5 s after it, and moves half as
    // much as person 1's: those moments beside the voice belong to the turn, not to person 0's noise.
    const brisk = [0, 1, 2, 3, 4, 5].map((k) => ({ who: k % 2, from: 1 + k * 3.6, to: 4 + k * 3.6 }));
    const early = brisk.map((t) => (t.who === 0 ? { ...t, from: t.from - 0.5, to: t.to + 0.5 } : t));
    const [quieter, other] = mouths(early, 2, 23, undefined, 2);
    const people = [{ ...quieter!, open: quieter!.open.map((v) => 0.015 + (v - 0.015) * 0.5) }, other!];
    const shots = speakerShots({ people, speech: brisk.map((t) => ({ from: t.from, to: t.to })), from: 0, to: 23, splitWhenBoth: false })!;
    expect(shots.map((s) => s.speaker)).toEqual([0, 1, 0, 1, 0, 1]);
    expect(shots.slice(1).map((s) => s.from)).toEqual(brisk.slice(1).map((t) => t.from));
  });

  it("cuts where the new speaker's voice starts, not at a moment when neither mouth moves", () => {
    // Person 0's lips stop at 2.9 s, but the detected voice runs on to 3.6 s; at 3.5 s neither mouth moves
    // (person 1's by a hair more than person 0's); person 1's voice starts at 4.15 s.
    const speech = [{ from: 0.5, to: 3.6 }, { from: 4.15, to: 7 }];
    const lips = [{ who: 0, from: 0.5, to: 2.9 }, { who: 1, from: 4.15, to: 7 }];
    const hair = (who: number, t: number) => (who === 1 && Math.abs(t - 3.5) < 1e-6 ? 0.002 : 0);
    const shots = speakerShots({ people: mouths(lips, 2, 8, hair, 2), speech, from: 0, to: 8, splitWhenBoth: false })!;
    expect(shots.map((s) => s.speaker)).toEqual([0, 1]);
    expect(shots[1]!.from).toBe(4.15);
  });

  it("never cuts more often than the minimum shot; with layout auto a quick exchange is shown split", () => {
    // Four quick turns of 0.8 s between 3.5 and 8 s.
    const quick = [
      { who: 0, from: 0.5, to: 3.2 },
      { who: 1, from: 3.5, to: 4.3 },
      { who: 0, from: 4.6, to: 5.4 },
      { who: 1, from: 5.7, to: 6.5 },
      { who: 0, from: 6.8, to: 7.6 },
      { who: 1, from: 8.2, to: 11.5 },
    ];
    const people = mouths(quick, 2, 12);
    const voice = quick.map((t) => ({ from: t.from, to: t.to }));
    const single = speakerShots({ people, speech: voice, from: 0, to: 12, splitWhenBoth: false })!;
    for (const shot of single) expect(shot.to - shot.from).toBeGreaterThanOrEqual(MIN_SHOT_SECONDS);
    const auto = speakerShots({ people, speech: voice, from: 0, to: 12, splitWhenBoth: true })!;
    const both = auto.filter((s) => s.both);
    expect(both).toHaveLength(1);
    expect(both[0]!.from).toBeLessThanOrEqual(3.6);
    expect(both[0]!.to).toBeGreaterThanOrEqual(7.5);
    expect(auto[0]!.speaker).toBe(0);
    expect(auto.at(-1)!.speaker).toBe(1);
    for (const shot of auto) expect(shot.to - shot.from).toBeGreaterThanOrEqual(MIN_SHOT_SECONDS);
  });

  it("says nothing without a voice or with fewer than two mouths", () => {
    expect(speakerShots({ people: mouths(turns, 2, 13), speech: [], from: 0, to: 13, splitWhenBoth: false })).toBeNull();
    expect(speakerShots({ people: mouths(turns, 1, 13), speech, from: 0, to: 13, splitWhenBoth: false })).toBeNull();
  });
});

describe("crop expression", () => {
  it("is a flat sum of gated straight pieces that ffmpeg-style evaluation agrees with", () => {
    const path = [
      { from: 0, to: 2, x0: 0.2, x1: 0.4, y0: 0.5, y1: 0.5 },
      { from: 2, to: 5, x0: 0.4, x1: 0.4, y0: 0.5, y1: 0.5 },
      { from: 5, to: Number.POSITIVE_INFINITY, x0: 0.9, x1: 0.9, y0: 0.5, y1: 0.5 },
    ];
    const expression = pathExpression(path, "x");
    expect(expression).not.toMatch(/if\(/);
    // Evaluate the expression the way ffmpeg does, with its gte/lt as 0/1.
    const evaluate = (t: number) =>
      Function("t", "gte", "lt", `return ${expression};`)(t, (a: number, b: number) => (a >= b ? 1 : 0), (a: number, b: number) => (a < b ? 1 : 0)) as number;
    for (const t of [0, 1, 1.999, 2, 3, 4.999, 5, 9]) expect(evaluate(t)).toBeCloseTo(pathAt(path, t).x, 5);
  });
});

describe("long paths", () => {
  it("a 3-minute clip of constant to-and-fro motion stays within the segment budget", () => {
    const times = timesOf(180, 2);
    const candidate = { start: 0, end: 180, score: 0.5, reasons: ["x"], crop: [{ fromSeconds: 0, toSeconds: 180, centerX: 0.5, centerY: 0.5 }] };
    for (const layout of ["single", "split"] as const) {
      const samples = times.map((t) => ({
        t,
        faces: [{ who: 0, box: face(0.5 + 0.35 * Math.sin(t * 1.3), 0.3 + 0.1 * Math.sin(t * 0.7)) }, ...(layout === "split" ? [{ who: 1, box: face(0.1, 0.5) }] : [])],
      }));
      const plan = planFromTracks({ tracks: tracksOf(samples), times, frame: { width: 640, height: 360 }, candidate, config: { layout }, output: { width: 1080, height: 1920 }, speech: null });
      for (const view of [plan.views.single, plan.views.split?.top ?? [], plan.views.split?.bottom ?? []]) expect(view.length).toBeLessThanOrEqual(MAX_PATH_SEGMENTS);
      // Every crop expression of the clip together fits one command-line argument (128 KiB).
      const graph = reframeGraph({ width: 1080, height: 1920 }, plan.views);
      expect(graph.length).toBeLessThan(128 * 1024);
    }
  });

  it("the graph that switches between single and split (layout auto) shows each in its own time", async () => {
    const views = {
      single: constantPath(0.5, 0.5),
      split: { top: constantPath(0.2, 0.5), bottom: constantPath(0.8, 0.5), during: [{ from: 1, to: 2 }, { from: 3, to: Number.POSITIVE_INFINITY }] },
    };
    const graph = reframeGraph({ width: 90, height: 160 }, views, "gray");
    const raw = path.join(await mkdtemp(path.join(tmpdir(), "reframe-auto-")), "out.gray");
    // The source's brightness grows from left to right: a crop's brightness says where it was taken.
    const result = await runProcess({
      command: FFMPEG,
      args: ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "nullsrc=s=320x180:r=10:d=4,geq=lum='X*255/W':cb=128:cr=128", "-filter_complex", `${graph}[v]`, "-map", "[v]", "-f", "rawvideo", raw],
      timeoutMs: 60_000,
    });
    expect(result.exitCode, result.stderrTail).toBe(0);
    const frames = await readFile(raw);
    await rm(path.dirname(raw), { recursive: true, force: true });
    expect(frames.length).toBe(90 * 160 * 40);
    const mean = (n: number, from: number, to: number) => {
      let sum = 0;
      for (let i = n * 90 * 160 + from * 90; i < n * 90 * 160 + to * 90; i++) sum += frames[i]!;
      return sum / ((to - from) * 90);
    };
    for (let n = 0; n < 40; n++) {
      const t = n / 10;
      const top = mean(n, 0, 80);
      const bottom = mean(n, 80, 160);
      if ((t >= 1 && t < 2) || t >= 3) expect(bottom - top, `split at ${t} s`).toBeGreaterThan(100);
      else expect(Math.abs(bottom - top), `single at ${t} s`).toBeLessThan(5);
    }
  });

  it("ffmpeg accepts a crop expression of hundreds of pieces (its parser refuses a flat chain of about 100)", async () => {
    const path = Array.from({ length: 400 }, (_, i) => ({ from: i * 0.01, to: (i + 1) * 0.01, x0: i / 400, x1: (i + 1) / 400, y0: 0.5, y1: 0.5 }));
    path.push({ from: 4, to: Number.POSITIVE_INFINITY, x0: 1, x1: 1, y0: 0.5, y1: 0.5 });
    const filter = movingCrop(9 / 16, path);
    expect(pathExpression(path, "y")).toBe("0.500000");
    const result = await runProcess({
      command: FFMPEG,
      args: ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=s=320x180:r=10:d=4", "-vf", `${filter},showinfo`, "-f", "null", "-"],
      timeoutMs: 60_000,
    });
    expect(result.exitCode, result.stderrTail).toBe(0);
  });
});
