/**
 * The picture part of the clip's ffmpeg filter graph for a reframe plan: one
 * moving crop (single), two moving crops stacked (split: each face in its own
 * half of the frame), or both with the stacked one shown at times, scaled to
 * the output size, or the whole frame fitted over a blurred copy of itself
 * (fit), all in the one encode.
 *
 * The crop's x and y are ffmpeg expressions in `t` (seconds from the clip's
 * first frame), re-evaluated on every frame: a flat sum of straight-line
 * pieces, each switched on only inside its time span. Only numbers, `t` and
 * ffmpeg's frame-size variables appear in them.
 */
import { even, type Size } from "../render/geometry.ts";
import type { CameraPath, PathSegment, Span } from "./path.ts";
import type { Framing } from "./plan.ts";
import { zoomFilters } from "./zoom.ts";

function decimal(value: number): string {
  return value.toFixed(6);
}

function piece(segment: PathSegment, first: boolean, last: boolean, key: "x" | "y"): string {
  const v0 = key === "x" ? segment.x0 : segment.y0;
  const v1 = key === "x" ? segment.x1 : segment.y1;
  const span = segment.to - segment.from;
  const value =
    Math.abs(v1 - v0) < 1e-7 || !Number.isFinite(span) || span <= 0
      ? decimal(v0)
      : `(${decimal(v0)}+${decimal((v1 - v0) / span)}*(t-${decimal(segment.from)}))`;
  const gates = [first ? "" : `gte(t,${decimal(segment.from)})`, last ? "" : `lt(t,${decimal(segment.to)})`].filter((g) => g !== "");
  return gates.length === 0 ? value : `${gates.join("*")}*${value}`;
}

/**
 * Sums terms as a balanced tree of parenthesised groups: ffmpeg's expression
 * parser refuses a flat chain of about a hundred terms (its recursion guard),
 * while nesting depth grows only with the logarithm of the count this way.
 */
function balancedSum(terms: string[]): string {
  if (terms.length <= 4) return terms.join("+");
  const middle = Math.ceil(terms.length / 2);
  return `(${balancedSum(terms.slice(0, middle))})+(${balancedSum(terms.slice(middle))})`;
}

interface AxisPiece {
  from: number;
  to: number;
  v0: number;
  v1: number;
}

/** One axis of a path, with neighbouring pieces that form one straight line joined (a still axis becomes one piece). */
function axisPieces(path: CameraPath, key: "x" | "y"): AxisPiece[] {
  const pieces: AxisPiece[] = [];
  for (const s of path) {
    const next = { from: s.from, to: s.to, v0: key === "x" ? s.x0 : s.y0, v1: key === "x" ? s.x1 : s.y1 };
    const last = pieces.at(-1);
    if (last && Number.isFinite(last.to) && Math.abs(last.v1 - next.v0) < 1e-7) {
      const lastSlope = (last.v1 - last.v0) / (last.to - last.from);
      const span = next.to - next.from;
      const nextSlope = Number.isFinite(span) && span > 0 ? (next.v1 - next.v0) / span : 0;
      if (Math.abs(lastSlope - nextSlope) < 1e-7 && (Number.isFinite(span) ? true : Math.abs(lastSlope) < 1e-7)) {
        last.to = next.to;
        last.v1 = Number.isFinite(span) ? next.v1 : last.v1;
        continue;
      }
    }
    pieces.push(next);
  }
  return pieces;
}

/** The window centre along one axis over time, as a fraction of the frame. */
export function pathExpression(path: CameraPath, key: "x" | "y"): string {
  const pieces = axisPieces(path, key);
  if (pieces.length === 0) return "0.5";
  const asSegment = (p: AxisPiece): PathSegment => ({ from: p.from, to: p.to, x0: p.v0, x1: p.v1, y0: p.v0, y1: p.v1 });
  return balancedSum(pieces.map((p, i) => piece(asSegment(p), i === 0, i === pieces.length - 1, key)));
}

/**
 * The crop filter: the largest window of `aspect` (w/h) inside the decoded
 * frame (sized from iw/ih, so it holds for rotated sources too), centred on
 * the path and kept inside the frame, with even offsets for yuv420p. The
 * expressions are quoted so their commas stay inside the option.
 */
export function movingCrop(aspect: number, path: CameraPath): string {
  const a = decimal(aspect);
  const width = `2*trunc(min(iw,ih*${a})/2)`;
  const height = `2*trunc(min(ih,iw/${a})/2)`;
  const x = `2*trunc(max(0,min(iw-ow,(${pathExpression(path, "x")})*iw-ow/2))/2)`;
  const y = `2*trunc(max(0,min(ih-oh,(${pathExpression(path, "y")})*ih-oh/2))/2)`;
  return `crop=w='${width}':h='${height}':x='${x}':y='${y}'`;
}

/** ffmpeg's `enable` expression for clip-time spans (an open end stays on). */
function enableDuring(spans: Span[]): string {
  return spans.map((s) => (Number.isFinite(s.to) ? `gte(t,${decimal(s.from)})*lt(t,${decimal(s.to)})` : `gte(t,${decimal(s.from)})`)).join("+");
}

/**
 * The graph from the source's video to the finished picture, without an
 * output label (the caller appends one, and may append filters before it):
 *
 * - single only: one moving crop, scaled;
 * - split for the whole clip: two moving crops, each scaled to half the
 *   height, stacked;
 * - both (layout auto, or split with scenes of one person): the single and
 *   the stacked pictures are both made, and the stacked one is laid over the
 *   single one while the split is shown (overlay's enable);
 * - fit: fitGraph, given the decoded picture's size where it is known.
 */
export function reframeGraph(output: Size, views: Framing, pixelFormat = "yuv420p", picture?: Size): string {
  const finish = `setsar=1,format=${pixelFormat}`;
  if (views.fit) return fitGraph(output, finish, picture);
  const whole = `scale=${output.width}:${output.height}:flags=bicubic`;
  const split = views.split;
  // Zooms (zoom.ts) take the place of the plain scale, in the same chain.
  const zoomed = views.zooms && views.zooms.length > 0 ? zoomFilters(output, views.zooms) : whole;
  if (!split || split.during.length === 0) return `[0:v:0]${movingCrop(output.width / output.height, views.single)},${zoomed},${finish}`;
  const halfHeight = Math.max(2, Math.round(output.height / 4) * 2);
  const half = `scale=${output.width}:${halfHeight}:flags=bicubic,setsar=1`;
  const aspect = output.width / halfHeight;
  const stacked = [`[top_in]${movingCrop(aspect, split.top)},${half}[top]`, `[bottom_in]${movingCrop(aspect, split.bottom)},${half}[bottom]`];
  const always = split.during.length === 1 && split.during[0]!.from <= 0 && !Number.isFinite(split.during[0]!.to);
  if (always) {
    return ["[0:v:0]split=2[top_in][bottom_in]", ...stacked, `[top][bottom]vstack=inputs=2,scale=${output.width}:${output.height},${finish}`].join(";");
  }
  return [
    "[0:v:0]split=3[single_in][top_in][bottom_in]",
    `[single_in]${movingCrop(output.width / output.height, views.single)},${whole},setsar=1[single]`,
    ...stacked,
    `[top][bottom]vstack=inputs=2,scale=${output.width}:${output.height},setsar=1[stacked]`,
    `[single][stacked]overlay=x=0:y=0:enable='${enableDuring(split.during)}',${finish}`,
  ].join(";");
}

/** The blurred backdrop is made at 1/BACKDROP_SCALE of the output's size: blurring a small picture costs little, and it is scaled up blurred anyway. */
const BACKDROP_SCALE = 8;
/** Box blur radius at that small size (about 5% of the output's short side once scaled up). */
const BACKDROP_BLUR = 6;
/**
 * The stacked backdrop is made from at most this many source frames a
 * second (seconds between the frames it takes): the stack repeats a band's
 * last picture at the frames in between (vstack shows each input's latest
 * frame at every timestamp any input has), so the output keeps the source's
 * frames and timing while the blur, the darkening and the bands' scaling run
 * half as often at 30 fps; a blurred backdrop changing 15 times a second
 * looks the same. (The overlay path cannot: overlay outputs a frame only for
 * each frame of its backdrop.)
 */
const BACKDROP_FRAME_SECONDS = 0.066;
/** The backdrop's brightness (luma multiplied) and colour (chroma pulled towards grey), so the picture stands out. */
const BACKDROP_LUMA = 0.5;
const BACKDROP_CHROMA = 0.7;

/** The small backdrop: the middle of the frame in the output's shape (cropped first, so only those pixels are scaled), blurred and darkened. */
function smallBackdrop(output: Size): { chain: string; width: number; height: number } {
  const width = even(output.width / BACKDROP_SCALE);
  const height = even(output.height / BACKDROP_SCALE);
  const a = decimal(output.width / output.height);
  const radius = Math.max(1, Math.min(BACKDROP_BLUR, Math.floor(Math.min(width, height) / 4) - 1));
  const chroma = `128+(val-128)*${BACKDROP_CHROMA}`;
  const chain = `crop=w='min(iw,ih*${a})':h='min(ih,iw/${a})',scale=${width}:${height}:flags=area,boxblur=${radius}:2,lutyuv=y='val*${BACKDROP_LUMA}':u='${chroma}':v='${chroma}'`;
  return { chain, width, height };
}

/** Where the fitted picture sits: its size, and the bands of backdrop before and after it along the axis it leaves free. */
export interface FitLayout {
  front: Size;
  axis: "vertical" | "horizontal";
  /** Band sizes along the axis (even, 0 when the picture fills it). */
  before: number;
  after: number;
}

/** The decoded picture scaled to fit inside the output, its shape kept, even sides, centred (to even offsets). */
export function fitLayout(output: Size, picture: Size): FitLayout {
  const widthBound = output.width / picture.width <= output.height / picture.height;
  const front = widthBound
    ? { width: output.width, height: Math.min(output.height, even((picture.height * output.width) / picture.width)) }
    : { width: Math.min(output.width, even((picture.width * output.height) / picture.height)), height: output.height };
  const gap = widthBound ? output.height - front.height : output.width - front.width;
  const before = 2 * Math.floor(gap / 4);
  return { front, axis: widthBound ? "vertical" : "horizontal", before, after: gap - before };
}

/**
 * fit: the whole decoded frame scaled to fit inside the output (its shape
 * kept, even sides), centred between bands of a backdrop made of the same
 * frame's middle, blurred and darkened at a small size and scaled up.
 *
 * With the decoded picture's size known (the probe's, turned upright), the
 * picture and the bands are stacked: nothing is drawn twice, and no overlay
 * is needed. ffmpeg's overlay takes its top picture with an alpha plane,
 * converting and blending every pixel; on a 20 s 1280x720 source to
 * 1080x1920 it cost about as much as all the rest of the fit's filters
 * (the render at 1.10-1.13x a centre crop's CPU, stacked 0.95-1.03x:
 * bench/README.md). Without the size, the same picture is laid over a full
 * backdrop with overlay.
 */
export function fitGraph(output: Size, finish: string, picture?: Size): string {
  const backdrop = smallBackdrop(output);
  if (!picture) {
    return [
      "[0:v:0]split=2[fit_back_in][fit_front_in]",
      `[fit_back_in]${backdrop.chain},scale=${output.width}:${output.height}:flags=fast_bilinear,setsar=1[fit_back]`,
      `[fit_front_in]scale=${output.width}:${output.height}:force_original_aspect_ratio=decrease:force_divisible_by=2:flags=bilinear,setsar=1[fit_front]`,
      `[fit_back][fit_front]overlay=x='2*trunc((W-w)/4)':y='2*trunc((H-h)/4)':eval=init,${finish}`,
    ].join(";");
  }
  const layout = fitLayout(output, picture);
  const front = `scale=${layout.front.width}:${layout.front.height}:flags=bilinear,setsar=1`;
  const vertical = layout.axis === "vertical";
  const bands = [
    { label: "fit_before", size: layout.before, atEnd: false },
    { label: "fit_after", size: layout.after, atEnd: true },
  ].filter((b) => b.size > 0);
  if (bands.length === 0) return `[0:v:0]${front},${finish}`;
  // Each band shows the matching stretch of the small backdrop (at least two pixels: yuv420p crops to even sizes).
  const small = vertical ? backdrop.height : backdrop.width;
  const whole = vertical ? output.height : output.width;
  const bandChains = bands.map((b, i) => {
    const part = Math.min(small, even((small * b.size) / whole));
    const at = b.atEnd ? small - part : 0;
    const crop = vertical ? `crop=${backdrop.width}:${part}:0:${at}` : `crop=${part}:${backdrop.height}:${at}:0`;
    const size = vertical ? `${output.width}:${b.size}` : `${b.size}:${output.height}`;
    return `[fit_back_${i}]${crop},scale=${size}:flags=fast_bilinear,setsar=1[${b.label}]`;
  });
  const spread = bands.map((_, i) => `[fit_back_${i}]`).join("");
  const order = [...(layout.before > 0 ? ["[fit_before]"] : []), "[fit_front]", ...(layout.after > 0 ? ["[fit_after]"] : [])];
  return [
    "[0:v:0]split=2[fit_back_in][fit_front_in]",
    `[fit_back_in]select='isnan(prev_selected_t)+gte(t-prev_selected_t,${BACKDROP_FRAME_SECONDS})',${backdrop.chain}${bands.length === 1 ? "" : `,split=${bands.length}`}${spread}`,
    ...bandChains,
    `[fit_front_in]${front}[fit_front]`,
    `${order.join("")}${vertical ? "vstack" : "hstack"}=inputs=${order.length},${finish}`,
  ].join(";");
}
