import { describe, expect, it } from "vitest";
import { followAxis, type Observation } from "../src/reframe/camera.ts";
import { movingCrop, pathExpression, reframeGraph } from "../src/reframe/filter.ts";
import { pathAt, type PathPoint } from "../src/reframe/path.ts";
import { MAX_PATH_SEGMENTS, planFromSamples } from "../src/reframe/plan.ts";
import { runProcess } from "../src/spawn.ts";
import { FFMPEG } from "./helpers/media.ts";
import type { FaceSample } from "../src/reframe/tracks.ts";

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

  it("a full-width window never moves", () => {
    expect(followAxis(observations((t) => t / 8, 8), 0, 8, { window: 1 })).toEqual([{ t: 0, v: 0.5 }, { t: 8, v: 0.5 }]);
  });
});

function face(x: number, y = 0.3, size = 0.1): FaceSample["faces"][number] {
  return { x: x - size / 2, y: y - size / 2, width: size, height: size, score: 0.9 };
}

describe("reframe plan from detections", () => {
  const frame = { width: 416, height: 234 };
  const output = { width: 720, height: 1280 };
  const twoScenes = { start: 10, end: 18, score: 0.5, reasons: ["x"], crop: [{ fromSeconds: 10, toSeconds: 14, centerX: 0.2, centerY: 0.5 }, { fromSeconds: 14, toSeconds: 18, centerX: 0.8, centerY: 0.5 }] };

  it("cuts (does not pan) at a scene change", () => {
    const samples: FaceSample[] = [];
    for (let t = 0; t < 8; t += 1 / 3) samples.push({ t, faces: [face(t < 4 ? 0.25 : 0.8)] });
    const plan = planFromSamples({ samples, frame, candidate: twoScenes, config: { layout: "single" }, output });
    expect(plan.used).toBe("faces");
    const path = plan.views[0]!;
    expect(Math.abs(pathAt(path, 3.99).x - 0.25)).toBeLessThan(0.04);
    expect(Math.abs(pathAt(path, 4).x - 0.8)).toBeLessThan(0.04);
  });

  it("scenes without a face keep the activity centre; no face at all falls back to activity", () => {
    const samples: FaceSample[] = [];
    for (let t = 0; t < 8; t += 1 / 3) samples.push({ t, faces: t < 4 ? [face(0.6)] : [] });
    const plan = planFromSamples({ samples, frame, candidate: twoScenes, config: { layout: "single" }, output });
    expect(plan.used).toBe("faces");
    expect(pathAt(plan.views[0]!, 6).x).toBeCloseTo(0.8, 6);
    const none = planFromSamples({ samples: samples.map((s) => ({ ...s, faces: [] })), frame, candidate: twoScenes, config: { layout: "single" }, output });
    expect(none).toMatchObject({ used: "activity", facesCount: 0 });
  });

  it("a single stray detection is not a person", () => {
    const samples: FaceSample[] = [];
    for (let t = 0; t < 4; t += 1 / 3) samples.push({ t, faces: Math.abs(t - 1) < 0.01 ? [face(0.7)] : [] });
    const plan = planFromSamples({ samples, frame, candidate: { ...twoScenes, end: 14, crop: twoScenes.crop.slice(0, 1) }, config: { layout: "single" }, output });
    expect(plan.used).toBe("activity");
  });

  it("split puts the left person on top and the right one below; one person stays single", () => {
    const samples: FaceSample[] = [];
    for (let t = 0; t < 4; t += 1 / 3) samples.push({ t, faces: [face(0.8), face(0.15)] });
    const candidate = { ...twoScenes, end: 14, crop: twoScenes.crop.slice(0, 1) };
    const split = planFromSamples({ samples, frame, candidate, config: { layout: "split" }, output });
    expect(split.views).toHaveLength(2);
    expect(split.facesCount).toBe(2);
    expect(Math.abs(pathAt(split.views[0]!, 2).x - 0.15)).toBeLessThan(0.2);
    expect(Math.abs(pathAt(split.views[1]!, 2).x - 0.8)).toBeLessThan(0.2);
    const alone = planFromSamples({ samples: samples.map((s) => ({ ...s, faces: s.faces.slice(0, 1) })), frame, candidate, config: { layout: "split" }, output });
    expect(alone.views).toHaveLength(1);
  });

  it("frames two people together when they fit the window", () => {
    const samples: FaceSample[] = [];
    for (let t = 0; t < 4; t += 1 / 3) samples.push({ t, faces: [face(0.45, 0.3, 0.06), face(0.58, 0.3, 0.06)] });
    const plan = planFromSamples({ samples, frame, candidate: { ...twoScenes, end: 14, crop: twoScenes.crop.slice(0, 1) }, config: { layout: "single" }, output });
    expect(Math.abs(pathAt(plan.views[0]!, 2).x - 0.515)).toBeLessThan(0.03);
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
    const samples: FaceSample[] = [];
    for (let t = 0; t < 180; t += 1 / 3) samples.push({ t, faces: [face(0.5 + 0.35 * Math.sin(t * 1.3), 0.3 + 0.1 * Math.sin(t * 0.7))] });
    const candidate = { start: 0, end: 180, score: 0.5, reasons: ["x"], crop: [{ fromSeconds: 0, toSeconds: 180, centerX: 0.5, centerY: 0.5 }] };
    for (const layout of ["single", "split"] as const) {
      const twoFaces = layout === "split" ? samples.map((s) => ({ ...s, faces: [...s.faces, face(0.1, 0.5)] })) : samples;
      const plan = planFromSamples({ samples: twoFaces, frame: { width: 416, height: 234 }, candidate, config: { layout }, output: { width: 1080, height: 1920 } });
      for (const view of plan.views) expect(view.length).toBeLessThanOrEqual(MAX_PATH_SEGMENTS);
      // Every crop expression of the clip together fits one command-line argument (128 KiB).
      const graph = reframeGraph({ width: 1080, height: 1920 }, plan.views);
      expect(graph.length).toBeLessThan(128 * 1024);
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
