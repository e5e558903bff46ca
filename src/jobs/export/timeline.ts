/**
 * The editor-neutral model every export format is written from: the source
 * (where it is, its picture and frame rate), and each clip as the spans of the
 * source it keeps (removed pauses and fillers make more than one), in frames
 * of the source, with the crop window's position as keyframes. Built from the
 * stored job and clips (fromJob) or directly (tests); the writers are pure
 * functions of it.
 */
import type { ClipFraming, FramingSegment } from "#contract";

/** Frames per second as a ratio (29.97 is 30000/1001). */
export interface FrameRate {
  num: number;
  den: number;
}

/** The crop window's top-left corner in source pixels, `frame` frames after its span's first frame. */
export interface CropKey {
  frame: number;
  left: number;
  top: number;
}

/** One kept stretch of the source: frames [sourceIn, sourceOut). */
export interface ExportSpan {
  sourceIn: number;
  sourceOut: number;
  /** At least one key; one key: the crop stands still. Two keys a frame apart make a cut. */
  crop: CropKey[];
}

export interface ExportClip {
  /** 0-based rank of the clip in the job. */
  index: number;
  /** The clip's title, or "Clip N" without one. */
  name: string;
  /** The rendered clip's public URL. */
  url: string;
  /** The crop window in source pixels and the picture it is scaled to. */
  window: { width: number; height: number };
  output: { width: number; height: number };
  spans: ExportSpan[];
  /** The clip's caption sidecars (public URLs), or null without sidecars. */
  captions: { vtt: string; srt: string } | null;
  /** Whether the clip also shows stacked split views at times (not carried by any format). */
  split: boolean;
}

export interface ExportTimeline {
  jobId: string;
  title: string;
  source: {
    /** Where an editor finds the source: its URL, or for an upload its file name. */
    url: string | null;
    fileName: string;
    width: number;
    height: number;
    /** Length in frames, when known. */
    durationFrames: number | null;
  };
  rate: FrameRate;
  clips: ExportClip[];
  /** Where the job's whole transcript is read (the authenticated API). */
  transcriptUrl: string | null;
}

const KNOWN_RATES: FrameRate[] = [
  { num: 24000, den: 1001 },
  { num: 30000, den: 1001 },
  { num: 60000, den: 1001 },
];

/** The frame rate as a ratio: the NTSC rates exactly, whole rates as themselves, others to a thousandth. */
export function frameRate(fps: number): FrameRate {
  const known = KNOWN_RATES.find((rate) => Math.abs(rate.num / rate.den - fps) < 0.005);
  if (known) return known;
  if (Math.abs(fps - Math.round(fps)) < 0.005) return { num: Math.max(1, Math.round(fps)), den: 1 };
  return { num: Math.round(fps * 1000), den: 1000 };
}

export function fps(rate: FrameRate): number {
  return rate.num / rate.den;
}

export function toFrames(seconds: number, rate: FrameRate): number {
  return Math.round((seconds * rate.num) / rate.den);
}

/** The source stretches a clip keeps: [start, end] less its removed spans. */
export function keptSpans(start: number, end: number, removed: { start_seconds: number; end_seconds: number }[]): { start: number; end: number }[] {
  const kept: { start: number; end: number }[] = [];
  let at = start;
  for (const span of [...removed].sort((a, b) => a.start_seconds - b.start_seconds)) {
    if (span.start_seconds > at) kept.push({ start: at, end: Math.min(span.start_seconds, end) });
    at = Math.max(at, span.end_seconds);
  }
  if (end > at) kept.push({ start: at, end });
  return kept.filter((span) => span.end > span.start);
}

/** The path's centre at clip time `t` (held before the first and after the last piece). */
function centreAt(path: FramingSegment[], t: number): { x: number; y: number } {
  const segment = path.find((s) => t >= s.from_seconds && t < s.to_seconds) ?? (t < path[0]!.from_seconds ? path[0]! : path.at(-1)!);
  const span = segment.to_seconds - segment.from_seconds;
  const f = span > 0 ? Math.min(1, Math.max(0, (t - segment.from_seconds) / span)) : 0;
  return { x: segment.x0 + (segment.x1 - segment.x0) * f, y: segment.y0 + (segment.y1 - segment.y0) * f };
}

/** The window's corner for a centre, kept inside the frame with even offsets (as the render's crop filter places it). */
function corner(centre: { x: number; y: number }, framing: Pick<ClipFraming, "source_width" | "source_height" | "crop_width" | "crop_height">): { left: number; top: number } {
  const place = (c: number, frame: number, window: number) => 2 * Math.trunc(Math.max(0, Math.min(frame - window, c * frame - window / 2)) / 2);
  return { left: place(centre.x, framing.source_width, framing.crop_width), top: place(centre.y, framing.source_height, framing.crop_height) };
}

/**
 * The crop keys of one kept span: where the window is on its first frame, on
 * each end of a straight piece inside it (a piece that starts elsewhere than
 * the last ended gives a key on the frame before, so the move is a cut), and
 * on its last frame. Keys that change nothing are dropped.
 */
export function cropKeys(framing: ClipFraming, clipStart: number, span: { start: number; end: number }, rate: FrameRate): CropKey[] {
  const first = toFrames(span.start, rate);
  const last = Math.max(first, toFrames(span.end, rate) - 1);
  const frameOf = (clipSeconds: number) => toFrames(clipStart + clipSeconds, rate) - first;
  const at = (frame: number) => corner(centreAt(framing.path, (first + frame) * (rate.den / rate.num) - clipStart), framing);
  const frames = new Set<number>([0, last - first]);
  framing.path.forEach((segment, i) => {
    const previous = framing.path[i - 1];
    const from = frameOf(segment.from_seconds);
    frames.add(from);
    if (previous && (previous.x1 !== segment.x0 || previous.y1 !== segment.y0)) frames.add(from - 1);
    frames.add(frameOf(segment.to_seconds) - 1);
  });
  const keys = [...frames]
    .filter((frame) => frame >= 0 && frame <= last - first)
    .sort((a, b) => a - b)
    .map((frame) => ({ frame, ...at(frame) }));
  // A key on a straight line between its neighbours adds nothing.
  const kept = keys.filter((key, i) => {
    const before = keys[i - 1];
    const after = keys[i + 1];
    if (!before || !after) return true;
    const f = (key.frame - before.frame) / (after.frame - before.frame);
    const lerp = (a: number, b: number) => a + (b - a) * f;
    return Math.abs(lerp(before.left, after.left) - key.left) > 1 || Math.abs(lerp(before.top, after.top) - key.top) > 1;
  });
  const still = kept.every((key) => key.left === kept[0]!.left && key.top === kept[0]!.top);
  return still ? [kept[0]!] : kept;
}

/** A centred window of the output's shape, for clips whose engine reported no framing. */
export function centredFraming(source: { width: number; height: number; fps: number }, output: { width: number; height: number }, clipSeconds: number): ClipFraming {
  const aspect = output.width / output.height;
  return {
    source_width: source.width,
    source_height: source.height,
    source_fps: source.fps,
    crop_width: 2 * Math.trunc(Math.min(source.width, source.height * aspect) / 2),
    crop_height: 2 * Math.trunc(Math.min(source.height, source.width / aspect) / 2),
    path: [{ from_seconds: 0, to_seconds: clipSeconds, x0: 0.5, x1: 0.5, y0: 0.5, y1: 0.5 }],
    split: false,
  };
}
