/**
 * What kind of picture a clip is, measured on the frames the face tracker
 * samples anyway (reframe=auto decides from it when no person was found):
 *
 * - text density: the share of pixels on a sharp horizontal edge (a jump of
 *   EDGE_STEP grey levels between neighbouring pixels). Text, code, slides
 *   and user interfaces are full of them; camera pictures, softened by
 *   lenses, motion and compression, have few.
 * - stillness: the share of consecutive sampled frames between which almost
 *   nothing changed (slides, a paused screen, a static shot).
 * - motion: whether something moves somewhere in the picture (a subject the
 *   activity plan can follow).
 *
 * A picture that reads as text, or that stays still nearly throughout, has
 * no subject a crop could follow: it is shown whole (fit). Anything else
 * with no person in it follows its region of activity.
 *
 * The work is a few integer operations per pixel on every other row of the
 * sampled frames (640 pixels wide): about 1 ms a frame.
 */

/** Grey levels (0-255) between neighbouring pixels that make a sharp edge. */
const EDGE_STEP = 64;
/** A frame is text-like with at least this share of its pixels on sharp edges (measured: text screens 0.06-0.12, photos and camera pictures under 0.02). */
export const TEXT_EDGE_SHARE = 0.04;
/** Grey levels a pixel must change by between sampled frames to count as changed. */
const CHANGE_STEP = 24;
/** A pair of sampled frames with less than this share of changed pixels is still. */
const STILL_CHANGED = 0.002;
/** A clip is still (no moving subject) when at least this share of its frame pairs are. */
export const STILL_CLIP_SHARE = 0.8;

export interface ContentVerdict {
  /** What the clip is shown as when it has no person in it. */
  framing: "fit" | "activity";
  /** Median share of pixels on sharp edges over the sampled frames. */
  textDensity: number;
  /** Share of consecutive frame pairs with (almost) nothing changed. */
  stillShare: number;
  /** Why, in words (logs and docs). */
  reason: "text" | "still" | "motion";
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export class ContentMeter {
  private readonly edges: number[] = [];
  private readonly stills: boolean[] = [];
  private previous: Uint8Array | null = null;

  /** Measures one RGB frame (width x height x 3 bytes). */
  add(rgb: Uint8Array, width: number, height: number): void {
    const rows = Math.floor(height / 2);
    const grey = new Uint8Array(rows * width);
    for (let r = 0; r < rows; r++) {
      const row = r * 2 * width * 3;
      for (let x = 0; x < width; x++) {
        const p = row + x * 3;
        // Integer luma (BT.601 weights, /256).
        grey[r * width + x] = (77 * rgb[p]! + 150 * rgb[p + 1]! + 29 * rgb[p + 2]!) >> 8;
      }
    }
    let edges = 0;
    for (let r = 0; r < rows; r++) {
      const base = r * width;
      for (let x = 1; x < width; x++) if (Math.abs(grey[base + x]! - grey[base + x - 1]!) >= EDGE_STEP) edges++;
    }
    this.edges.push(edges / Math.max(1, rows * (width - 1)));
    const previous = this.previous;
    if (previous && previous.length === grey.length) {
      let changed = 0;
      for (let i = 0; i < grey.length; i++) if (Math.abs(grey[i]! - previous[i]!) >= CHANGE_STEP) changed++;
      this.stills.push(changed / grey.length < STILL_CHANGED);
    }
    this.previous = grey;
  }

  verdict(): ContentVerdict {
    const textDensity = median(this.edges);
    const stillShare = this.stills.length === 0 ? 1 : this.stills.filter(Boolean).length / this.stills.length;
    if (textDensity >= TEXT_EDGE_SHARE) return { framing: "fit", textDensity, stillShare, reason: "text" };
    if (stillShare >= STILL_CLIP_SHARE) return { framing: "fit", textDensity, stillShare, reason: "still" };
    return { framing: "activity", textDensity, stillShare, reason: "motion" };
  }
}
