/**
 * Whether a source can be analysed while it downloads, from its first bytes.
 *
 * The analysis reads a streamed source front to back through a pipe (no
 * seeking), which works for containers that carry their index before (or
 * between) the media:
 *
 *   - MP4/MOV with the `moov` box before `mdat` ("faststart"), and fragmented
 *     MP4 (`moov` then `moof`/`mdat` pairs): streamed once `moov` is on disk.
 *   - Matroska/WebM, MPEG-TS, MPEG-PS and FLV: streamed from the start (their
 *     headers come first; Matroska's cues at the end are only for seeking).
 *
 * Everything else waits for the whole file: an MP4 whose `moov` comes after
 * `mdat` (nothing can be decoded before the index, which arrives last), AVI
 * (its index is at the end) and anything not recognised here. A wrong guess
 * costs time, never a result: the streamed measurements are checked against
 * the probe of the finished file and measured again from it when they do not
 * match or the streamed pass failed (analyse/early.ts).
 */

export type StreamVerdict =
  /** Not enough bytes yet to tell. */
  | { kind: "more" }
  /** Streamable once `headBytes` are on disk (enough for probing the head). */
  | { kind: "stream"; container: string; headBytes: number }
  /** Must wait for the whole file. */
  | { kind: "whole"; reason: string };

/**
 * Bytes probed from the head of a container whose header is not boxed: its
 * streams are declared up front (Matroska's tracks, MPEG-TS's PMT, FLV's
 * flags), and only the container and whether there is audio are needed.
 */
export const PROBE_HEAD_BYTES = 256 * 1024;
/** Bytes past the end of `moov` before probing an MP4: its first samples. */
const AFTER_MOOV_BYTES = 64 * 1024;

const MP4_FIRST_BOXES = new Set(["ftyp", "moov", "free", "skip", "wide", "mdat", "pnot", "styp", "uuid"]);

function boxType(buf: Buffer, at: number): string {
  return buf.toString("latin1", at + 4, at + 8);
}

/** Walks top-level MP4 boxes until `moov` or `mdat` shows which comes first. */
function mp4Verdict(head: Buffer, finished: boolean): StreamVerdict {
  let at = 0;
  for (;;) {
    if (at + 8 > head.length) return finished ? { kind: "whole", reason: "the MP4 has no index (moov) box" } : { kind: "more" };
    let size = head.readUInt32BE(at);
    const type = boxType(head, at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > head.length) return finished ? { kind: "whole", reason: "the MP4 ends inside a box header" } : { kind: "more" };
      const large = head.readBigUInt64BE(at + 8);
      if (large > BigInt(Number.MAX_SAFE_INTEGER)) return { kind: "whole", reason: "an MP4 box claims an impossible size" };
      size = Number(large);
      header = 16;
    } else if (size === 0) {
      // The box runs to the end of the file.
      size = Number.MAX_SAFE_INTEGER - at;
    }
    if (size < header) return { kind: "whole", reason: "an MP4 box has an invalid size" };
    if (type === "moov") return { kind: "stream", container: "mp4 (moov first)", headBytes: at + size + AFTER_MOOV_BYTES };
    if (type === "mdat" || type === "moof") return { kind: "whole", reason: "the MP4's index (moov) comes after its media: it is read once the whole file is there" };
    at += size;
  }
}

/**
 * The verdict on a source from its first bytes (`head`, as many as are on
 * disk, at most what the walk needs) and whether the download finished.
 */
export function streamVerdict(head: Buffer, finished: boolean): StreamVerdict {
  if (head.length < 12) return finished ? { kind: "whole", reason: "the file is too short to stream" } : { kind: "more" };
  if (MP4_FIRST_BOXES.has(boxType(head, 0))) return mp4Verdict(head, finished);
  if (head.readUInt32BE(0) === 0x1a45dfa3) return { kind: "stream", container: "matroska/webm", headBytes: PROBE_HEAD_BYTES };
  if (head.toString("latin1", 0, 3) === "FLV") return { kind: "stream", container: "flv", headBytes: PROBE_HEAD_BYTES };
  if (head.readUInt32BE(0) === 0x000001ba) return { kind: "stream", container: "mpeg-ps", headBytes: PROBE_HEAD_BYTES };
  if (head[0] === 0x47) {
    // MPEG-TS: a sync byte every 188 bytes.
    if (head.length < 189 * 3) return finished ? { kind: "whole", reason: "the file is too short to stream" } : { kind: "more" };
    if (head[188] === 0x47 && head[376] === 0x47) return { kind: "stream", container: "mpeg-ts", headBytes: PROBE_HEAD_BYTES };
  }
  if (head.toString("latin1", 0, 4) === "RIFF") return { kind: "whole", reason: "AVI keeps its index at the end: it is read once the whole file is there" };
  return { kind: "whole", reason: "the container is not one the analysis reads while it downloads" };
}
