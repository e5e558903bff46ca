/**
 * Whether a face is whole in an output frame, read from the frame alone: the
 * face's cut-out is framed in a border whose left and right sides have
 * colours of their own (faces-media.ts `border`; BORDER is green and magenta,
 * SECOND_BORDER cyan and blue for a second person), so the columns where
 * either colour runs down the tile's height are that person's tile edges as
 * the viewer sees them. With either edge in view, the face's place inside the
 * tile (known from the photo) says whether the face is wholly inside the
 * frame; with neither in view, it is not.
 */
import type { DecodedFrames } from "./faces-judge.ts";
import { positionAt, type Placement } from "./faces-media.ts";

/** Border colours no photo, the background or the orange distractor contains: one pair per person. */
export const BORDER = { color: "0x00ff00", right: "0xff00ff", size: 5 } as const;
export const SECOND_BORDER = { color: "0x00ffff", right: "0x0000ff", size: 5 } as const;

function rgb(hex: string): [number, number, number] {
  const v = Number.parseInt(hex.replace(/^0x|^#/, ""), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

/** A pixel test for one border colour (within 110 of it, about what compression and scaling leave of a saturated colour). */
function near(hex: string): (frame: Uint8Array, i: number) => boolean {
  const [r, g, b] = rgb(hex);
  return (frame, i) => Math.hypot(frame[i]! - r, frame[i + 1]! - g, frame[i + 2]! - b) < 110;
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
  if (!placement.border?.right) throw new Error("the placement needs a border with a right colour");
  const isLeft = near(placement.border.color);
  const isRight = near(placement.border.right);
  const tileWidth = placement.width;
  const tileHeight = Math.round((crop.height * tileWidth) / crop.width / 2) * 2;
  return out.times.map((t, i) => {
    const at = positionAt(placement.path, t);
    // The middle half of the tile's rows (the border's top and bottom runs are left out).
    const from = Math.max(top, Math.round(top + (at.y + tileHeight * 0.25) * scale));
    const to = Math.min(top + viewHeight, Math.round(top + (at.y + tileHeight * 0.75) * scale));
    if (to - from < 4) return null;
    const frame = out.frames[i]!;
    const leftSide = columnsOf(frame, out.width, from, to, isLeft);
    const rightSide = columnsOf(frame, out.width, from, to, isRight);
    let tileLeft: number;
    if (leftSide.length > 0) tileLeft = leftSide.at(-1)! + 1;
    else if (rightSide.length > 0) tileLeft = rightSide[0]! - tileWidth * scale;
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
