/** The export formats: each a pure writer of the timeline model, with its media type and file extension. */
import { writeEdl } from "./edl.ts";
import { writeFcpxml } from "./fcpxml.ts";
import { writeMlt } from "./mlt.ts";
import { writeOtio } from "./otio.ts";
import type { ExportTimeline } from "./timeline.ts";

export const EXPORT_FORMATS = ["fcpxml", "edl", "otio", "mlt"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_WRITERS: Record<ExportFormat, { contentType: string; extension: string; write: (timeline: ExportTimeline) => string }> = {
  fcpxml: { contentType: "application/xml; charset=utf-8", extension: "fcpxml", write: writeFcpxml },
  edl: { contentType: "text/plain; charset=us-ascii", extension: "edl", write: writeEdl },
  otio: { contentType: "application/json; charset=utf-8", extension: "otio", write: writeOtio },
  mlt: { contentType: "application/xml; charset=utf-8", extension: "mlt", write: writeMlt },
};
