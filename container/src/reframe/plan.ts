/**
 * Plans the crop of one clip: which reframing applies (faces, activity or
 * centre), how many faces were seen, and the camera's paths: one single view
 * over the whole clip, and where the layout stacks two people, two views (top
 * half, bottom half) with the stretches of the clip they are shown in.
 *
 * - reframe=center: the middle, nothing detected; reframe=fit: the whole
 *   frame over a blurred copy of itself (filter.ts), nothing detected.
 * - reframe=faces or auto: faces are tracked in the clip's span only. With a
 *   person found, the camera follows faces (scenes without one keep the
 *   activity centre); with none, the clip falls back to the activity plan
 *   (one centre per scene) and says so in its `reframe` field. auto also
 *   measures the sampled frames (content.ts): a clip with nobody in it that
 *   reads as text (a screen, slides) or stays still is shown whole (fit).
 * - In a scene, the single view frames the people who fit in the window
 *   together (the most prominent and whoever fits beside them). When they do
 *   not fit and someone speaks, it frames the speaker (speaker.ts): a cut at
 *   each change of speaker, never two cuts closer than MIN_SHOT_SECONDS. With
 *   no voice to go by, it frames the most prominent person.
 * - layout=split: every scene with two or more people shows the two main ones
 *   (the two who speak most, else the two most prominent), the left one on
 *   top; a scene with one person is framed single (a split of one person
 *   would show the same face twice).
 * - layout=auto: as single, but a stretch where two people speak in turns
 *   faster than a shot can follow is shown split.
 */
import type { TimedFace, Zoom } from "./zoom.ts";
import type { ClipConfig, REFRAME_USED } from "#contract";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { cropSteps, type Size } from "../render/geometry.ts";
import type { Candidate, SourceInfo, StageProgress } from "../shared/types.ts";
import { followAxis, TOLERANCE, type Observation } from "./camera.ts";
import { ContentMeter, type ContentVerdict } from "./content.ts";
import { lookAt, type FaceBox } from "./detector.ts";
import { constantPath, pathAt, type CameraPath, type PathPoint, type Span } from "./path.ts";
import { sampleFrames } from "./sample.ts";
import { speakerShots, type MouthSeries, type SpeakerShot } from "./speaker.ts";
import { facesCount, isPerson, Tracker, type Track } from "./tracker.ts";

export type ReframeUsed = (typeof REFRAME_USED)[number];

/**
 * The crop over the clip: the single view, and the split views with the
 * stretches they are shown in; or, with `fit`, no crop at all: the whole
 * frame over a blurred copy of itself (the paths are then unused).
 */
export interface Framing {
  single: CameraPath;
  split?: { top: CameraPath; bottom: CameraPath; during: Span[] };
  fit?: boolean;
  /** Punch-in zooms on the single picture (zoom.ts); none while the split is shown, none with fit. */
  zooms?: Zoom[];
}

const FIT: Framing = { single: constantPath(0.5, 0.5), fit: true };

export interface ReframePlan {
  used: ReframeUsed;
  facesCount: number;
  views: Framing;
  /** Wall time spent sampling and tracking, for logs and the benchmark. */
  detectionMs: number;
  /** Frames sampled, and the looks the tracker took at them. */
  frames: number;
  looks: Tracker["counts"];
  /** reframe=auto: what the sampled frames looked like (content.ts), which decides fit or activity when no person was found. */
  content?: ContentVerdict;
  /** faces: the people's boxes as tracked (clip seconds, frame fractions), so a zoom can keep them whole. */
  faces?: TimedFace[];
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
/** Mouths are measured this long (seconds) either side of speech too: their motion in silence is their noise. */
const MOUTH_MARGIN_SECONDS = 1;

export interface PlanArgs {
  runner: FfmpegRunner;
  source: SourceInfo;
  candidate: Candidate;
  config: Pick<ClipConfig, "reframe" | "layout">;
  output: Size;
  /** Where the source has speech (source seconds; the analysis's voice activity); omitted or null when unknown. */
  speech?: { start: number; end: number }[] | null;
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

/** The framing to render: the plan's, or without a plan the activity plan (reframe=auto) or the centre. */
export function viewsOf(plan: Pick<ReframePlan, "views"> | undefined, config: Pick<ClipConfig, "reframe">, candidate: Candidate): Framing {
  if (plan) return plan.views;
  if (config.reframe === "fit") return FIT;
  return { single: config.reframe === "center" ? constantPath(0.5, 0.5) : activityPath(candidate) };
}

/** Whether clip time `t` shows the split views. */
export function splitAt(views: Framing, t: number): boolean {
  return views.split?.during.some((s) => t >= s.from && t < s.to) ?? false;
}

/** The framing frozen at clip time `t` (the thumbnail shows the crop in force then). */
export function viewsAt(views: Framing, t: number): Framing {
  if (views.fit) return views;
  const still = (path: CameraPath) => {
    const c = pathAt(path, t);
    return constantPath(c.x, c.y);
  };
  if (views.split && splitAt(views, t)) {
    return { single: still(views.single), split: { top: still(views.split.top), bottom: still(views.split.bottom), during: [{ from: 0, to: Number.POSITIVE_INFINITY }] } };
  }
  return { single: still(views.single) };
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

/** The box a track last showed at or before `t` (or its first, before it starts). */
function heldBox(track: Track, t: number): FaceBox | undefined {
  let found: FaceBox | undefined;
  for (const p of track.points) {
    if (p.t > t + 1e-6) break;
    found = p.box;
  }
  return found;
}

function heaviestFirst(tracks: Track[]): Track[] {
  return [...tracks].sort((a, b) => b.weight - a.weight);
}

/** The main person and whoever can share the window with them for the whole scene. */
function group(persons: Track[], windowWidth: number): Track[] {
  const [main, ...others] = heaviestFirst(persons);
  if (!main) return [];
  const members = [main];
  for (const other of others) {
    if (other.weight < GROUP_WEIGHT * main.weight) continue;
    const times = [...new Set([...members, other].flatMap((tr) => tr.points.map((p) => p.t)))];
    const fits = times.every((t) => {
      const boxes = [...members, other].map((tr) => heldBox(tr, t)).filter((b): b is FaceBox => b !== undefined);
      return union(boxes).width <= GROUP_FIT * windowWidth;
    });
    if (fits) members.push(other);
  }
  return members;
}

/** The boxes a camera framing `members` follows: their union at every time any of them was seen (`cut`: one of them jumped there). */
function groupBoxes(members: Track[]): { t: number; box: FaceBox; cut: boolean }[] {
  const times = [...new Set(members.flatMap((tr) => tr.points.map((p) => p.t)))].sort((a, b) => a - b);
  return times.map((t) => ({
    t,
    box: union(members.map((tr) => heldBox(tr, t) ?? tr.points[0]!.box)),
    cut: members.some((tr) => tr.points.some((p) => p.t === t && p.jumped === true)),
  }));
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

function followBoxes(boxes: { t: number; box: FaceBox; cut: boolean }[], from: number, to: number, window: { width: number; height: number }, tolerance: number): CameraPath {
  const xObs: Observation[] = boxes.map(({ t, box, cut }) => ({ t, center: box.x + box.width / 2, half: box.width / 2, cut }));
  const yObs: Observation[] = boxes.map(({ t, box, cut }) => ({ t, center: box.y + box.height / 2, half: box.height / 2, cut }));
  const xs = followAxis(xObs, from, to, { window: window.width, tolerance });
  const ys = followAxis(yObs, from, to, { window: window.height, offset: HEADROOM * window.height, tolerance });
  return toSegments(xs, ys, from, to);
}

function meanX(track: Track): number {
  return track.points.reduce((sum, p) => sum + p.box.x + p.box.width / 2, 0) / track.points.length;
}

function mouthSeries(track: Track): MouthSeries {
  const measured = track.points.filter((p) => p.mouth !== undefined);
  return { id: track.id, times: measured.map((p) => p.t), open: measured.map((p) => p.mouth!) };
}

/** Merges touching or overlapping spans. */
function merged(spans: Span[]): Span[] {
  const out: Span[] = [];
  for (const s of [...spans].sort((a, b) => a.from - b.from)) {
    const last = out.at(-1);
    if (last && s.from <= last.to + 1e-6) last.to = Math.max(last.to, s.to);
    else out.push({ ...s });
  }
  return out;
}

/** What one stretch of a scene shows: whom the single view frames, and the pair when it is shown split. */
interface Shot {
  from: number;
  to: number;
  single: Track[];
  pair?: [Track, Track];
}

/** The shots of one scene with people in it. */
function sceneShots(args: { persons: Track[]; from: number; to: number; layout: ClipConfig["layout"]; speech: Span[] | null; window: { width: number } }): Shot[] {
  const { persons, from, to, layout, speech, window } = args;
  const together = group(persons, window.width);
  const byId = new Map(persons.map((p) => [p.id, p]));
  const talk: SpeakerShot[] | null =
    persons.length >= 2 && speech ? speakerShots({ people: persons.map(mouthSeries), speech, from, to, splitWhenBoth: layout === "auto" }) : null;
  const leftFirst = (a: Track, b: Track): [Track, Track] => (meanX(a) <= meanX(b) ? [a, b] : [b, a]);
  if (layout === "split" && persons.length >= 2) {
    // The two who speak most, else the two most prominent.
    const spoken = new Map<number, number>();
    for (const shot of talk ?? []) spoken.set(shot.speaker, (spoken.get(shot.speaker) ?? 0) + shot.to - shot.from);
    const ranked = [...persons].sort((a, b) => (spoken.get(b.id) ?? 0) - (spoken.get(a.id) ?? 0) || b.weight - a.weight);
    return [{ from, to, single: together, pair: leftFirst(ranked[0]!, ranked[1]!) }];
  }
  // People who fit together are framed together: nobody needs to be cut away from.
  if (together.length === persons.length || !talk) return [{ from, to, single: together }];
  return talk.map((shot) => {
    const speaker = byId.get(shot.speaker)!;
    const pair = shot.both ? leftFirst(byId.get(shot.both[0])!, byId.get(shot.both[1])!) : undefined;
    return { from: shot.from, to: shot.to, single: [speaker], pair };
  });
}

export function planFromTracks(args: {
  tracks: Track[];
  /** The sampled times (clip seconds). */
  times: number[];
  frame: { width: number; height: number };
  candidate: Candidate;
  config: Pick<ClipConfig, "layout">;
  output: Size;
  /** Speech in clip seconds, or null when unknown. */
  speech: Span[] | null;
}): Pick<ReframePlan, "used" | "facesCount" | "views" | "faces"> {
  const { tracks, times, frame, candidate, config, output, speech } = args;
  const duration = candidate.end - candidate.start;
  const starts = sceneStarts(candidate);
  const fallback = activityPath(candidate);
  const samplesIn = (scene: number) => times.filter((t) => t >= starts[scene]! && t < (starts[scene + 1] ?? Number.POSITIVE_INFINITY)).length;
  const persons = tracks.filter((tr) => isPerson(tr, samplesIn(tr.scene)));
  const count = facesCount(persons);
  if (persons.length === 0 || frame.width === 0) return { used: "activity", facesCount: count, views: { single: fallback } };
  const window = windowFractions(output.width / output.height, frame.width, frame.height);
  const half = windowFractions(output.width / (output.height / 2), frame.width, frame.height);

  const shots: Shot[] = [];
  starts.forEach((from, scene) => {
    const to = starts[scene + 1] ?? duration;
    if (to <= from) return;
    const inScene = persons.filter((p) => p.scene === scene);
    if (inScene.length === 0) shots.push({ from, to, single: [] });
    else shots.push(...sceneShots({ persons: inScene, from, to, layout: config.layout, speech, window }));
  });

  const build = (tolerance: number): Framing => {
    const single: CameraPath = [];
    const top: CameraPath = [];
    const bottom: CameraPath = [];
    const during: Span[] = [];
    for (const shot of shots) {
      const held = pathAt(fallback, shot.from);
      single.push(...(shot.single.length > 0 ? followBoxes(groupBoxes(shot.single), shot.from, shot.to, window, tolerance) : constantPath(held.x, held.y, shot.from, shot.to)));
      if (shot.pair) {
        top.push(...followBoxes(groupBoxes([shot.pair[0]]), shot.from, shot.to, half, tolerance));
        bottom.push(...followBoxes(groupBoxes([shot.pair[1]]), shot.from, shot.to, half, tolerance));
        during.push({ from: shot.from, to: shot.to });
      } else {
        top.push(...constantPath(0.5, 0.5, shot.from, shot.to));
        bottom.push(...constantPath(0.5, 0.5, shot.from, shot.to));
      }
    }
    // The last pieces run on (the encode may see a frame just past the nominal end).
    for (const path of [single, top, bottom]) {
      const last = path.at(-1);
      if (last && Number.isFinite(last.to)) path.push(...constantPath(last.x1, last.y1, last.to));
    }
    const shown = merged(during);
    if (shown.length > 0 && shown.at(-1)!.to >= duration - 1e-6) shown.at(-1)!.to = Number.POSITIVE_INFINITY;
    return shown.length > 0 ? { single, split: { top, bottom, during: shown } } : { single };
  };
  let tolerance = TOLERANCE;
  let views = build(tolerance);
  const longest = (v: Framing) => Math.max(v.single.length, v.split?.top.length ?? 0, v.split?.bottom.length ?? 0);
  while (longest(views) > MAX_PATH_SEGMENTS && tolerance < 0.05) {
    tolerance *= 2;
    views = build(tolerance);
  }
  return { used: "faces", facesCount: count, views, faces: persons.flatMap((p) => p.points.map((point) => ({ t: point.t, box: point.box }))) };
}

export async function planReframe(args: PlanArgs): Promise<ReframePlan> {
  const { candidate, config } = args;
  const looks = { scans: 0, fineScans: 0, stillScans: 0, nearLooks: 0, stillSkips: 0, mouthLooks: 0, mouthSkips: 0 };
  if (config.reframe === "center") return { used: "center", facesCount: 0, views: { single: constantPath(0.5, 0.5) }, detectionMs: 0, frames: 0, looks };
  if (config.reframe === "fit") return { used: "fit", facesCount: 0, views: FIT, detectionMs: 0, frames: 0, looks };
  const began = Date.now();
  const duration = candidate.end - candidate.start;
  const speech = args.speech
    ? args.speech.map((s) => ({ from: s.start - candidate.start, to: s.end - candidate.start })).filter((s) => s.to > 0 && s.from < duration)
    : null;
  const sampled = await sampleFrames({ runner: args.runner, source: args.source, start: candidate.start, end: candidate.end, rawPath: args.rawPath, signal: args.signal });
  args.onProgress(0.2);
  const tracker = new Tracker({
    sceneStarts: sceneStarts(candidate),
    mouthsWanted: (t) => speech !== null && speech.some((s) => t >= s.from - MOUTH_MARGIN_SECONDS && t < s.to + MOUTH_MARGIN_SECONDS),
    // Turns shorter than a shot are told apart only where they can be shown: layout auto's split of a quick exchange.
    everyFrameMouths: config.layout === "auto",
  });
  // auto: the picture's kind decides between fit and activity if nobody is found.
  const meter = config.reframe === "auto" ? new ContentMeter() : null;
  try {
    for await (const frame of sampled.frames()) {
      args.signal.throwIfAborted();
      meter?.add(frame.rgb, sampled.width, sampled.height);
      await tracker.step(frame.t, { rgb: frame.rgb, width: sampled.width, height: sampled.height }, () => lookAt(frame.rgb, sampled.width, sampled.height));
      args.onProgress(0.2 + (0.8 * (frame.index + 1)) / sampled.times.length);
    }
  } finally {
    await sampled.close();
  }
  const tracked = planFromTracks({ tracks: tracker.result(), times: sampled.times, frame: sampled, candidate, config, output: args.output, speech });
  const content = meter?.verdict();
  const plan = tracked.used === "activity" && content?.framing === "fit" ? { ...tracked, used: "fit" as const, views: FIT } : tracked;
  return { ...plan, detectionMs: Date.now() - began, frames: sampled.times.length, looks: { ...tracker.counts }, ...(content ? { content } : {}) };
}
