/**
 * Whether a face is whole in an output frame, read from the frame alone: the
 * face's cut-out is framed in a border whose left side is pure green and
 * right side pure magenta (faces-media.ts `border`), so the columns where
 * either colour runs down the tile's height are the tile's edges as the
 * viewer sees them. With either edge in view, the face's place inside the
 * tile (known from the photo) says whether the face is wholly inside the
 * frame; with neither in view, it is not.
 */
import type { DecodedFrames } from "./faces-judge.ts";
import { positionAt, type Placement } from "./faces-media.ts";

/** Colours no photo, background or the orange distractor contains. */
export const BORDER = { color: "0x00ff00", right: "0xff00ff", size: 5 } as const;

function isGreen(frame: Uint8Array, i: number): boolean {
  return frame[i + 1]! > 150 && frame[i]! < 110 && frame[i + 2]! < 110;
}

function isMagenta(frame: Uint8Array, i: number): boolean {
  return frame[i]! > 150 && frame[i + 2]! > 150 && frame[i + 1]! < 110;
}

/** Columns of rows [top, bottom) where a colour runs down at least half of the rows. */
function columnsOf(frame: Uint8Array, width: number, top: number, bottom: number, test: (frame: Uint8Array, i: number) => boolean): number[] {
  const columns: number[] = [];
  for (let x = 0; x < width; x++) {
    let hits = 0;
    for (let y = top; y < bottom; y++) if (test(frame, (y * width + x) * 3)) hits++;
    if (hits >= (bottom - top) / 2) columns.push(x);
  }
  return columns;
}

/**
 * Output columns [left, right) of the placement's face in each judged frame
 * (null where neither border side is seen). `scale` is output pixels per
 * source pixel; `top`/`height` select the view's rows (a split frame's half).
 */
export function faceColumns(args: { placement: Placement; out: DecodedFrames; scale: number; top?: number; height?: number }): ({ left: number; right: number } | null)[] {
  const { placement, out, scale } = args;
  const top = args.top ?? 0;
  const viewHeight = args.height ?? out.height;
  const { crop, face } = placement.person;
  const tileWidth = placement.width;
  const tileHeight = Math.round((crop.height * tileWidth) / crop.width / 2) * 2;
  return out.times.map((t, i) => {
    const at = positionAt(placement.path, t);
    // The middle half of the tile's rows (the border's top and bottom runs are left out).
    const from = Math.max(top, Math.round(top + (at.y + tileHeight * 0.25) * scale));
    const to = Math.min(top + viewHeight, Math.round(top + (at.y + tileHeight * 0.75) * scale));
    if (to - from < 4) return null;
    const frame = out.frames[i]!;
    const green = columnsOf(frame, out.width, from, to, isGreen);
    const magenta = columnsOf(frame, out.width, from, to, isMagenta);
    let tileLeft: number;
    if (green.length > 0) tileLeft = green.at(-1)! + 1;
    else if (magenta.length > 0) tileLeft = magenta[0]! - tileWidth * scale;
    else return null;
    const left = tileLeft + face.x * tileWidth * scale;
    return { left, right: left + face.width * tileWidth * scale };
  });
}

/** Share of judged frames (at the times `when` accepts) in which the placement's face lies wholly inside the frame (one pixel of slack). */
export function wholeFaceShare(args: { placement: Placement; out: DecodedFrames; scale: number; top?: number; height?: number; when?: (t: number) => boolean }): number {
  const columns = faceColumns(args);
  const judged = args.out.times.map((t, i) => ({ t, i })).filter(({ t }) => (args.when ? args.when(t) : true));
  const whole = judged.filter(({ i }) => {
    const c = columns[i];
    return c !== null && c !== undefined && c.left >= -1 && c.right <= args.out.width + 1;
  });
  return whole.length / Math.max(1, judged.length);
}
