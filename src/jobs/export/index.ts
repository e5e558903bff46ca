/** The export formats: each a pure writer of the timeline model, with its media type and file extension. */
import { writeEdl } from "./edl";
import { writeFcpxml } from "./fcpxml";
import { writeMlt } from "./mlt";
import { writeOtio } from "./otio";
import type { ExportTimeline } from "./timeline";

export const EXPORT_FORMATS = ["fcpxml", "edl", "otio", "mlt"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_WRITERS: Record<ExportFormat, { contentType: string; extension: string; write: (timeline: ExportTimeline) => string }> = {
  fcpxml: { contentType: "application/xml; charset=utf-8", extension: "fcpxml", write: writeFcpxml },
  edl: { contentType: "text/plain; charset=us-ascii", extension: "edl", write: writeEdl },
  otio: { contentType: "application/json; charset=utf-8", extension: "otio", write: writeOtio },
  mlt: { contentType: "application/xml; charset=utf-8", extension: "mlt", write: writeMlt },
};
