/**
 * The brand stage of a clip's filter graph: after the picture is
 * framed (reframe) and before it is encoded, the logo is laid over it and
 * libass draws the captions and the hook title, all in the clip's one
 * encode. Captions come last, so words are never hidden under a logo.
 *
 * `picture` is a filter graph whose last chain ends unlabelled (the framed
 * picture); the result ends the same way, for the caller to label.
 */
import { assFilter } from "../captions/ass.ts";
import type { LogoPlacement } from "./logo.ts";

export interface BrandStage {
  /** The logo's input (e.g. "1:v") and where it goes, or none. */
  logo?: { input: string; placement: LogoPlacement } | null;
  /** ASS file with the captions and the hook title, or none. */
  assPath?: string | null;
}

export function brandStage(picture: string, stage: BrandStage): string {
  let graph = picture;
  if (stage.logo) {
    const { input, placement } = stage.logo;
    // Scaled once (the input is one still frame, repeated by overlay), alpha multiplied by the opacity.
    const logo = `[${input}]scale=${placement.width}:${placement.height}:flags=lanczos,format=rgba,colorchannelmixer=aa=${placement.opacity.toFixed(3)}[brand_logo]`;
    graph = `${graph}[brand_framed];${logo};[brand_framed][brand_logo]overlay=x=${placement.x}:y=${placement.y}:eof_action=repeat:format=auto,format=yuv420p`;
  }
  if (stage.assPath) graph = `${graph},${assFilter(stage.assPath)}`;
  return graph;
}
