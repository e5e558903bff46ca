/**
 * Plans the crop of one clip: which reframing applies (faces, activity or
 * centre), how many faces were seen, and one camera path per view (one for
 * the single layout, two for split: top half, bottom half).
 *
 * - reframe=center: the middle, nothing detected.
 * - reframe=faces or auto: faces are looked for in the clip's span only. With
 *   a person found, the camera follows faces (scenes without one keep the
 *   activity centre); with none, the clip falls back to the activity plan
 *   (one centre per scene) and says so in its `reframe` field.
 * - layout=split needs two people in scenes covering at least half the clip;
 *   otherwise the clip is framed as single (a split of one person would show
 *   the same face twice).
 */
import type { ClipConfig } from "#contract";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { cropSteps, type Size } from "../render-geometry.ts";
import type { Candidate, SourceInfo, StageProgress } from "../types.ts";
import { followAxis, TOLERANCE, type Observation } from "./camera.ts";
import { detectFaces, type FaceBox } from "./detector.ts";
import { constantPath, pathAt, type CameraPath, type PathPoint } from "./path.ts";
import { sampleFrames } from "./sample.ts";
import { buildTracks, facesCount, isPerson, type FaceSample, type Track } from "./tracks.ts";

export type ReframeUsed = "faces" | "activity" | "center";

export interface ReframePlan {
  used: ReframeUsed;
  facesCount: number;
  /** One path (single) or two (split: top half first). */
  views: CameraPath[];
  /** Wall time spent sampling and detecting, for logs and the benchmark. */
  detectionMs: number;
}

/** A group of faces is framed together only while it spans at most this much of the window. */
const GROUP_FIT = 0.85;
/** A second person joins the framing only when at least this heavy relative to the main one. */
const GROUP_WEIGHT = 0.3;
/**
 * Most straight pieces one view's path may have: the crop expressions travel
 * as one ffmpeg argument (at most 128 KiB on Linux). Past it the path is
 * simplified more coarsely (a 3-minute clip of constant motion needs that).
 */
export const MAX_PATH_SEGMENTS = 200;
/** Vertical axis: the crop sits this much (of its height) below the face, leaving headroom above it. */
const HEADROOM = 0.12;

export interface PlanArgs {
  runner: FfmpegRunner;
  source: SourceInfo;
  candidate: Candidate;
  config: Pick<ClipConfig, "reframe" | "layout">;
  output: Size;
  /** Scratch file for the sampled frames (removed afterwards). */
  rawPath: string;
  signal: AbortSignal;
  onProgress: StageProgress;
}

/** Scene starts inside the clip, in clip seconds, ascending, the first 0. */
export function sceneStarts(candidate: Candidate): number[] {
  const starts = cropSteps(candidate.start, candidate.crop).map((s) => s.fromClipSeconds);
  return [...new Set([0, ...starts])].sort((a, b) => a - b);
}

/** The activity plan as a path: one fixed centre per scene, cut between scenes. */
export function activityPath(candidate: Candidate): CameraPath {
  const steps = cropSteps(candidate.start, candidate.crop);
  return steps.map((step, i) => ({
    from: step.fromClipSeconds,
    to: steps[i + 1]?.fromClipSeconds ?? Number.POSITIVE_INFINITY,
    x0: step.centerX,
    x1: step.centerX,
    y0: step.centerY,
    y1: step.centerY,
  }));
}

/** The views to render: the plan's, or without a plan the activity plan (reframe=auto) or the centre. */
export function viewsOf(plan: Pick<ReframePlan, "views"> | undefined, config: Pick<ClipConfig, "reframe">, candidate: Candidate): CameraPath[] {
  if (plan) return plan.views;
  return [config.reframe === "center" ? constantPath(0.5, 0.5) : activityPath(candidate)];
}

/** Each view frozen at clip time `t` (the thumbnail shows the crop in force then). */
export function viewsAt(views: CameraPath[], t: number): CameraPath[] {
  return views.map((view) => {
    const c = pathAt(view, t);
    return constantPath(c.x, c.y);
  });
}

/** Fraction of the frame's width and height a window of `aspect` (w/h) covers at most. */
export function windowFractions(aspect: number, frameWidth: number, frameHeight: number): { width: number; height: number } {
  const frameAspect = frameWidth / frameHeight;
  return { width: Math.min(1, aspect / frameAspect), height: Math.min(1, frameAspect / aspect) };
}

function union(boxes: FaceBox[]): FaceBox {
  const x = Math.min(...boxes.map((b) => b.x));
  const y = Math.min(...boxes.map((b) => b.y));
  const right = Math.max(...boxes.map((b) => b.x + b.width));
  const bottom = Math.max(...boxes.map((b) => b.y + b.height));
  return { x, y, width: right - x, height: bottom - y, score: 1 };
}

/** The box a track last showed at or before `t`, if that was recent. */
function heldBox(track: Track, t: number): FaceBox | undefined {
  let found: FaceBox | undefined;
  for (const p of track.points) {
    if (p.t > t + 1e-6) break;
    found = p.box;
  }
  return found;
}

/** The main person and whoever can share the frame with them for the whole scene. */
function subjectBoxes(persons: Track[], windowWidth: number): { t: number; box: FaceBox }[] {
  const [main, ...others] = [...persons].sort((a, b) => b.weight - a.weight);
  if (!main) return [];
  const group = [main];
  for (const other of others) {
    if (other.weight < GROUP_WEIGHT * main.weight) continue;
    const fits = main.points.every((p) => {
      const boxes = [...group, other].map((tr) => heldBox(tr, p.t)).filter((b): b is FaceBox => b !== undefined);
      return union(boxes).width <= GROUP_FIT * windowWidth;
    });
    if (fits) group.push(other);
  }
  return main.points.map((p) => {
    const boxes = group.map((tr) => heldBox(tr, p.t)).filter((b): b is FaceBox => b !== undefined);
    return { t: p.t, box: union(boxes) };
  });
}

/** Joins the two axes' point lists into path segments over [from, to). */
function toSegments(xs: PathPoint[], ys: PathPoint[], from: number, to: number): CameraPath {
  const at = (points: PathPoint[], t: number) => pathAt(points.slice(1).map((p, i) => ({ from: points[i]!.t, to: p.t, x0: points[i]!.v, x1: p.v, y0: 0, y1: 0 })), t).x;
  const single = (points: PathPoint[], t: number) => (points.length === 1 ? points[0]!.v : at(points, t));
  const times = [...new Set([from, ...xs.map((p) => p.t), ...ys.map((p) => p.t), to])].filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  const segments: CameraPath = [];
  for (let i = 0; i + 1 < times.length; i++) {
    const a = times[i]!;
    const b = times[i + 1]!;
    if (b - a < 1e-6) continue;
    segments.push({ from: a, to: b, x0: single(xs, a), x1: single(xs, b), y0: single(ys, a), y1: single(ys, b) });
  }
  return segments;
}

function followBoxes(boxes: { t: number; box: FaceBox }[], from: number, to: number, window: { width: number; height: number }, tolerance: number): CameraPath {
  const xObs: Observation[] = boxes.map(({ t, box }) => ({ t, center: box.x + box.width / 2, half: box.width / 2 }));
  const yObs: Observation[] = boxes.map(({ t, box }) => ({ t, center: box.y + box.height / 2, half: box.height / 2 }));
  const xs = followAxis(xObs, from, to, { window: window.width, tolerance });
  const ys = followAxis(yObs, from, to, { window: window.height, offset: HEADROOM * window.height, tolerance });
  return toSegments(xs, ys, from, to);
}

function meanX(track: Track): number {
  return track.points.reduce((sum, p) => sum + p.box.x + p.box.width / 2, 0) / track.points.length;
}

/** Assembles a clip's path scene by scene; `follow` gives a scene's path or undefined for no face there. */
function assemble(starts: number[], duration: number, fallback: CameraPath, follow: (scene: number, from: number, to: number) => CameraPath | undefined): CameraPath {
  const path: CameraPath = [];
  starts.forEach((from, scene) => {
    const to = starts[scene + 1] ?? duration;
    if (to <= from) return;
    const followed = follow(scene, from, to);
    if (followed && followed.length > 0) path.push(...followed);
    else {
      const c = pathAt(fallback, from);
      path.push(...constantPath(c.x, c.y, from, to));
    }
  });
  // The last piece runs on (the encode may see a frame just past the nominal end).
  const last = path.at(-1);
  if (last && Number.isFinite(last.to)) path.push(...constantPath(last.x1, last.y1, last.to));
  return path;
}

export function planFromSamples(args: {
  samples: FaceSample[];
  frame: { width: number; height: number };
  candidate: Candidate;
  config: Pick<ClipConfig, "layout">;
  output: Size;
}): Omit<ReframePlan, "detectionMs"> {
  const { samples, frame, candidate, config, output } = args;
  const duration = candidate.end - candidate.start;
  const starts = sceneStarts(candidate);
  const fallback = activityPath(candidate);
  const tracks = buildTracks(samples, starts);
  const samplesPerScene = starts.map((from, i) => samples.filter((s) => s.t >= from && s.t < (starts[i + 1] ?? Number.POSITIVE_INFINITY)).length);
  const persons = tracks.filter((tr) => isPerson(tr, samplesPerScene[tr.scene] ?? 0));
  const count = facesCount(samples);
  if (persons.length === 0 || frame.width === 0) return { used: "activity", facesCount: count, views: [fallback] };
  const personsIn = (scene: number) => persons.filter((p) => p.scene === scene);
  const views = (tolerance: number) => followViews({ starts, duration, fallback, personsIn, frame, output, layout: config.layout, tolerance });
  let tolerance = TOLERANCE;
  let planned = views(tolerance);
  while (planned.some((view) => view.length > MAX_PATH_SEGMENTS) && tolerance < 0.05) {
    tolerance *= 2;
    planned = views(tolerance);
  }
  return { used: "faces", facesCount: count, views: planned };
}

function followViews(args: {
  starts: number[];
  duration: number;
  fallback: CameraPath;
  personsIn: (scene: number) => Track[];
  frame: { width: number; height: number };
  output: Size;
  layout: ClipConfig["layout"];
  tolerance: number;
}): CameraPath[] {
  const { starts, duration, fallback, personsIn, frame, output, tolerance } = args;
  if (args.layout === "split") {
    const pairSeconds = starts.reduce((sum, from, i) => sum + (personsIn(i).length >= 2 ? (starts[i + 1] ?? duration) - from : 0), 0);
    if (pairSeconds >= duration / 2) {
      const half = windowFractions(output.width / (output.height / 2), frame.width, frame.height);
      const pairOf = (scene: number) => personsIn(scene).sort((a, b) => b.weight - a.weight).slice(0, 2).sort((a, b) => meanX(a) - meanX(b));
      const view = (slot: 0 | 1) =>
        assemble(starts, duration, fallback, (scene, from, to) => {
          const pair = pairOf(scene);
          const track = pair.length === 2 ? pair[slot] : slot === 0 ? pair[0] : undefined;
          return track ? followBoxes(track.points, from, to, half, tolerance) : undefined;
        });
      return [view(0), view(1)];
    }
  }
  const window = windowFractions(output.width / output.height, frame.width, frame.height);
  const path = assemble(starts, duration, fallback, (scene, from, to) => {
    const boxes = subjectBoxes(personsIn(scene), window.width);
    return boxes.length > 0 ? followBoxes(boxes, from, to, window, tolerance) : undefined;
  });
  return [path];
}

export async function planReframe(args: PlanArgs): Promise<ReframePlan> {
  const { candidate, config } = args;
  if (config.reframe === "center") return { used: "center", facesCount: 0, views: [constantPath(0.5, 0.5)], detectionMs: 0 };
  const began = Date.now();
  const sampled = await sampleFrames({
    runner: args.runner,
    source: args.source,
    start: candidate.start,
    end: candidate.end,
    rawPath: args.rawPath,
    signal: args.signal,
  });
  args.onProgress(0.2);
  const samples: FaceSample[] = [];
  for (const [i, frame] of sampled.frames.entries()) {
    args.signal.throwIfAborted();
    samples.push({ t: sampled.times[i]!, faces: await detectFaces(frame, sampled.width, sampled.height) });
    args.onProgress(0.2 + (0.8 * (i + 1)) / sampled.frames.length);
  }
  const plan = planFromSamples({ samples, frame: sampled, candidate, config, output: args.output });
  return { ...plan, detectionMs: Date.now() - began };
}
