/**
 * The removal stage of a clip's filter graph: when pauses or
 * filler words are cut out, the framed picture and the audio are split into
 * the kept pieces (trim/atrim), the pieces of the picture concatenated, and
 * the pieces of the audio joined by short crossfades so no cut clicks. All
 * of it is part of the clip's one encode (index.ts); nothing is decoded or
 * encoded twice.
 *
 * Each audio piece but the last runs CROSSFADE_SECONDS longer, into the cut
 * it precedes: a crossfade overlaps its two inputs by that much, so the
 * joined audio is exactly as long as the joined picture and the two stay in
 * sync however many cuts a clip has. The stage sits after the picture is
 * framed (whose camera paths are timed from the clip's first frame) and
 * before burned captions (timed on the cut clip, captions/index.ts).
 */
import type { Interval } from "../steer/removals.ts";

export const CROSSFADE_SECONDS = 0.012;

function decimal(value: number): string {
  return value.toFixed(6);
}

/**
 * Filter chains taking `videoIn` and `audioIn` (labels) to `[cut_v]` and
 * `[cut_a]`, for pieces in seconds from the clip's start.
 */
export function cutStage(videoIn: string, audioIn: string, pieces: Interval[]): { chains: string[]; video: string; audio: string } {
  const n = pieces.length;
  const vSplit = pieces.map((_, i) => `[cut_vs${i}]`).join("");
  const aSplit = pieces.map((_, i) => `[cut_as${i}]`).join("");
  const chains = [`${videoIn}split=${n}${vSplit}`, `${audioIn}asplit=${n}${aSplit}`];
  pieces.forEach((piece, i) => {
    chains.push(`[cut_vs${i}]trim=start=${decimal(piece.start)}:end=${decimal(piece.end)},setpts=PTS-STARTPTS[cut_v${i}]`);
    const audioEnd = i < n - 1 ? piece.end + CROSSFADE_SECONDS : piece.end;
    chains.push(`[cut_as${i}]atrim=start=${decimal(piece.start)}:end=${decimal(audioEnd)},asetpts=PTS-STARTPTS[cut_a${i}]`);
  });
  chains.push(`${pieces.map((_, i) => `[cut_v${i}]`).join("")}concat=n=${n}:v=1:a=0[cut_v]`);
  let joined = "[cut_a0]";
  for (let i = 1; i < n; i++) {
    const out = i === n - 1 ? "[cut_a]" : `[cut_x${i}]`;
    chains.push(`${joined}[cut_a${i}]acrossfade=d=${decimal(CROSSFADE_SECONDS)}:c1=tri:c2=tri${out}`);
    joined = out;
  }
  if (n === 1) chains.push(`[cut_a0]anull[cut_a]`);
  return { chains, video: "[cut_v]", audio: "[cut_a]" };
}
