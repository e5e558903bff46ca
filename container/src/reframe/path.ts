/**
 * A virtual camera's path over one clip: the crop window's centre (fractions
 * of the decoded frame's width and height) as straight-line pieces in time.
 * Inside a scene the pieces join up; at a scene cut the next piece may start
 * elsewhere, which renders as a cut rather than a pan.
 */
export interface PathSegment {
  /** Seconds from the clip's first frame; [from, to). */
  from: number;
  to: number;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

export type CameraPath = PathSegment[];

/** A stretch of clip time, seconds [from, to). */
export interface Span {
  from: number;
  to: number;
}

export function constantPath(centerX: number, centerY: number, from = 0, to = Number.POSITIVE_INFINITY): CameraPath {
  return [{ from, to, x0: centerX, x1: centerX, y0: centerY, y1: centerY }];
}

/** The window's centre at clip time `t` (clamped to the path's ends). */
export function pathAt(path: CameraPath, t: number): { x: number; y: number } {
  const segment = path.find((s) => t >= s.from && t < s.to) ?? (t < (path[0]?.from ?? 0) ? path[0] : path.at(-1));
  if (!segment) return { x: 0.5, y: 0.5 };
  const span = segment.to - segment.from;
  const f = Number.isFinite(span) && span > 0 ? Math.min(1, Math.max(0, (t - segment.from) / span)) : 0;
  return { x: segment.x0 + (segment.x1 - segment.x0) * f, y: segment.y0 + (segment.y1 - segment.y0) * f };
}

export interface PathPoint {
  t: number;
  v: number;
}

/**
 * Drops points that lie within `tolerance` of the straight line between their
 * neighbours (Ramer-Douglas-Peucker), so a camera sampled 15 times a second
 * renders as a short ffmpeg expression with the same motion.
 */
export function simplify(points: PathPoint[], tolerance: number): PathPoint[] {
  if (points.length <= 2) return points;
  const keep = new Array<boolean>(points.length).fill(false);
  keep[0] = true;
  keep[points.length - 1] = true;
  const stack: [number, number][] = [[0, points.length - 1]];
  while (stack.length > 0) {
    const [a, b] = stack.pop()!;
    const pa = points[a]!;
    const pb = points[b]!;
    let worst = -1;
    let worstDistance = tolerance;
    for (let i = a + 1; i < b; i++) {
      const p = points[i]!;
      const f = (p.t - pa.t) / (pb.t - pa.t || 1);
      const distance = Math.abs(p.v - (pa.v + (pb.v - pa.v) * f));
      if (distance > worstDistance) {
        worst = i;
        worstDistance = distance;
      }
    }
    if (worst > 0) {
      keep[worst] = true;
      stack.push([a, worst], [worst, b]);
    }
  }
  return points.filter((_, i) => keep[i]);
}
