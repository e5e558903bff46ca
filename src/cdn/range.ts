/** HTTP Range (RFC 9110 section 14) for a single byte range; multi-range requests get the whole object. */

export type RangeResult =
  | { kind: "none" }
  | { kind: "range"; offset: number; length: number }
  | { kind: "unsatisfiable" };

export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header) return { kind: "none" };
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Other units, malformed values and multiple ranges are ignored, as the RFC allows.
  if (!match) return { kind: "none" };
  const [, startText = "", endText = ""] = match;
  if (startText === "" && endText === "") return { kind: "none" };
  if (startText === "") {
    // Suffix range: the last N bytes.
    const suffix = Number(endText);
    if (suffix === 0 || size === 0) return { kind: "unsatisfiable" };
    const length = Math.min(suffix, size);
    return { kind: "range", offset: size - length, length };
  }
  const start = Number(startText);
  if (start >= size) return { kind: "unsatisfiable" };
  const end = endText === "" ? size - 1 : Math.min(Number(endText), size - 1);
  if (end < start) return { kind: "none" };
  return { kind: "range", offset: start, length: end - start + 1 };
}
