/**
 * The virtual camera on one axis over one scene: it follows a subject (a
 * face, or a group of faces that fits in the window) the way a camera
 * operator would, not the way a detector jitters:
 *
 * - a dead zone: it stays put while the subject moves a little inside it;
 * - once it moves, it re-centres with limited speed and acceleration, braking
 *   so it arrives without overshooting, and never reverses within one move;
 * - it aims a little ahead (the whole clip is known in advance), so it does
 *   not trail a walking person;
 * - when the subject is lost for a moment it holds its last position, and
 *   when it jumps (a cut in the source) the camera cuts with it;
 * - a hard rule keeps the subject's box inside the window even when the
 *   subject outruns the smooth motion.
 *
 * Units are fractions of the frame along this axis; speeds are per second.
 */
import { simplify, type PathPoint } from "./path.ts";

/** One observation of the subject: centre and half its extent along the axis. */
export interface Observation {
  t: number;
  center: number;
  half: number;
  /** The subject jumped here: it is not interpolated from the observation before (the camera cuts). */
  cut?: boolean;
}

export interface AxisCamera {
  /** The window's size along the axis (fraction of the frame, <= 1). */
  window: number;
  /** Added to the subject's centre (e.g. headroom on the vertical axis). */
  offset?: number;
  /** Path simplification tolerance (fraction of the frame); default TOLERANCE. */
  tolerance?: number;
}

const STEP_SECONDS = 1 / 15;
/** Relative to the window size: */
const DEAD_ZONE = 0.12;
const SETTLE = 0.02;
const MAX_SPEED = 1.0;
const MAX_ACCELERATION = 2.5;
const EDGE_MARGIN = 0.02;
/** How far ahead the camera aims. */
const LEAD_SECONDS = 0.3;
/** A gap between observations longer than this means the subject was lost: hold, do not glide across. */
export const LOST_AFTER_SECONDS = 0.8;
/** Path simplification tolerance, fraction of the frame (about 2 px of a 1920 frame). */
export const TOLERANCE = 0.001;

function clamp(value: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, value));
}

/** Where the subject is at `t`: interpolated between close observations, held across gaps and past the ends. */
export function subjectAt(observations: Observation[], t: number): Observation {
  const first = observations[0]!;
  if (t <= first.t) return { ...first, t };
  for (let i = 1; i < observations.length; i++) {
    const b = observations[i]!;
    if (t > b.t) continue;
    const a = observations[i - 1]!;
    if (b.cut || b.t - a.t > LOST_AFTER_SECONDS) return { ...a, t };
    const f = (t - a.t) / (b.t - a.t || 1);
    return { t, center: a.center + (b.center - a.center) * f, half: a.half + (b.half - a.half) * f };
  }
  return { ...observations.at(-1)!, t };
}

/**
 * The camera's positions over [from, to) following `observations` (sorted,
 * non-empty), simplified to the points a piecewise-linear path needs.
 */
export function followAxis(observations: Observation[], from: number, to: number, camera: AxisCamera): PathPoint[] {
  const w = camera.window;
  const lo = w / 2;
  const hi = 1 - w / 2;
  if (w >= 0.999 || observations.length === 0) return [{ t: from, v: 0.5 }, { t: to, v: 0.5 }];
  const offset = camera.offset ?? 0;
  const goalAt = (t: number) => clamp(subjectAt(observations, t + LEAD_SECONDS).center + offset, lo, hi);
  const deadZone = DEAD_ZONE * w;
  const settle = SETTLE * w;
  const maxSpeed = MAX_SPEED * w;
  const maxAccel = MAX_ACCELERATION * w;
  const margin = EDGE_MARGIN * w;

  let position = goalAt(from);
  let velocity = 0;
  let moving = false;
  const points: PathPoint[] = [];
  for (let t = from; ; t = Math.min(to, t + STEP_SECONDS)) {
    const error = goalAt(t) - position;
    if (!moving && Math.abs(error) > deadZone) moving = true;
    const wanted = moving && Math.abs(error) > settle ? Math.sign(error) * Math.min(maxSpeed, Math.sqrt(2 * maxAccel * Math.abs(error))) : 0;
    let next = velocity + clamp(wanted - velocity, -maxAccel * STEP_SECONDS, maxAccel * STEP_SECONDS);
    // Never swing through zero within a step: a change of direction starts from standstill.
    if (velocity !== 0 && Math.sign(next) === -Math.sign(velocity)) next = 0;
    velocity = next;
    position += velocity * STEP_SECONDS;
    if (moving && Math.abs(goalAt(t) - position) <= settle && Math.abs(velocity) <= maxAccel * STEP_SECONDS) {
      moving = false;
      velocity = 0;
    }
    // The subject's box stays inside the window whatever the smooth motion says.
    const now = subjectAt(observations, t);
    const half = Math.min(now.half, w / 2 - margin);
    const least = now.center + half - w / 2 + margin;
    const most = now.center - half + w / 2 - margin;
    if (position < least) {
      position = least;
      velocity = Math.max(velocity, 0);
    } else if (position > most) {
      position = most;
      velocity = Math.min(velocity, 0);
    }
    position = clamp(position, lo, hi);
    points.push({ t, v: position });
    if (t >= to) break;
  }
  return simplify(points, camera.tolerance ?? TOLERANCE);
}
