/**
 * Is this a logo the engine can draw? Judged by the bytes alone (the
 * declared Content-Type is not trusted): a complete PNG or JPEG, at most
 * MAX_LOGO_PIXELS on each side.
 *
 * - PNG: the signature, every chunk's CRC-32, a valid IHDR (bit depth and
 *   colour type), PLTE where the colour type needs one, IDAT data that
 *   inflates to exactly the size the header promises with a valid filter
 *   byte on every scanline (interlaced images pass by pass), IEND last.
 *   Animated PNGs (acTL) are refused: the clip's one encode draws a still.
 * - JPEG: the marker structure from SOI to EOI, a baseline, extended or
 *   progressive Huffman frame header (what ffmpeg and every browser decode)
 *   with 1 (grey) or 3 (colour) components, and at least one scan.
 *
 * A Worker cannot afford a full JPEG decoder; the engine decodes the image
 * with ffmpeg before its render and draws none (saying so) if that fails.
 */
import { MAX_LOGO_PIXELS, type LogoContentType } from "#contract";

export type LogoCheck = { ok: true; contentType: LogoContentType; width: number; height: number } | { ok: false; problem: string };

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function fail(problem: string): LogoCheck {
  return { ok: false, problem };
}

function u16(bytes: Uint8Array, at: number): number {
  return (bytes[at]! << 8) | bytes[at + 1]!;
}

function u32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) >>> 0) + (bytes[at + 1]! << 16) + (bytes[at + 2]! << 8) + bytes[at + 3]!;
}

let crcTable: Uint32Array | null = null;

function crc32(bytes: Uint8Array, from: number, to: number): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = from; i < to; i++) crc = crcTable[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Bit depths each PNG colour type allows, and its channels. */
const PNG_COLOUR_TYPES: Record<number, { depths: number[]; channels: number }> = {
  0: { depths: [1, 2, 4, 8, 16], channels: 1 },
  2: { depths: [8, 16], channels: 3 },
  3: { depths: [1, 2, 4, 8], channels: 1 },
  4: { depths: [8, 16], channels: 2 },
  6: { depths: [8, 16], channels: 4 },
};

/** Adam7 passes: column start, row start, column step, row step. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/** Each pass (or the whole image) as [rows, bytes per row without the filter byte]. */
function scanlineLayout(width: number, height: number, bitsPerPixel: number, interlaced: boolean): [number, number][] {
  const rowBytes = (w: number) => Math.ceil((w * bitsPerPixel) / 8);
  if (!interlaced) return [[height, rowBytes(width)]];
  return ADAM7.map(([x0, y0, dx, dy]): [number, number] => {
    const w = width > x0 ? Math.ceil((width - x0) / dx) : 0;
    const h = height > y0 ? Math.ceil((height - y0) / dy) : 0;
    return w === 0 || h === 0 ? [0, 0] : [h, rowBytes(w)];
  });
}

/** Inflates a zlib stream, giving up past `limit` bytes (a decompression bomb is no logo). */
async function inflateUpTo(data: Uint8Array, limit: number): Promise<Uint8Array | null> {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate"));
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        return null;
      }
      parts.push(value);
    }
  } catch {
    return null;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

async function checkPng(bytes: Uint8Array): Promise<LogoCheck> {
  let at = PNG_SIGNATURE.length;
  let header: { width: number; height: number; depth: number; colour: number; interlaced: boolean } | null = null;
  let palette = false;
  let ended = false;
  const idat: Uint8Array[] = [];
  let idatDone = false;
  while (at < bytes.length) {
    if (at + 12 > bytes.length) return fail("The PNG ends inside a chunk header.");
    const length = u32(bytes, at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const dataStart = at + 8;
    const dataEnd = dataStart + length;
    if (!/^[A-Za-z]{4}$/.test(type)) return fail("The PNG has a malformed chunk.");
    if (dataEnd + 4 > bytes.length) return fail("The PNG is truncated.");
    if (crc32(bytes, at + 4, dataEnd) !== u32(bytes, dataEnd)) return fail(`The PNG's ${type} chunk is corrupt (CRC mismatch).`);
    if (header === null && type !== "IHDR") return fail("The PNG does not start with its IHDR header.");
    switch (type) {
      case "IHDR": {
        if (header !== null || length !== 13) return fail("The PNG's IHDR header is malformed.");
        const [depth, colour, compression, filter, interlace] = bytes.subarray(dataStart + 8, dataStart + 13);
        header = { width: u32(bytes, dataStart), height: u32(bytes, dataStart + 4), depth: depth!, colour: colour!, interlaced: interlace === 1 };
        const kind = PNG_COLOUR_TYPES[header.colour];
        if (!kind || !kind.depths.includes(header.depth) || compression !== 0 || filter !== 0 || interlace! > 1) {
          return fail("The PNG's header names an invalid colour type, bit depth or method.");
        }
        break;
      }
      case "PLTE":
        palette = true;
        break;
      case "acTL":
        return fail("Animated PNGs are not supported: upload a still image.");
      case "IDAT":
        if (idatDone) return fail("The PNG's image data is split by other chunks.");
        idat.push(bytes.subarray(dataStart, dataEnd));
        break;
      case "IEND":
        ended = true;
        break;
      default:
        if (idat.length > 0) idatDone = true;
        // Unknown critical chunks (upper-case first letter) cannot be skipped by a decoder.
        if (type[0] === type[0]!.toUpperCase()) return fail(`The PNG has an unknown critical chunk ${type}.`);
    }
    at = dataEnd + 4;
    if (ended) break;
  }
  if (!header) return fail("The PNG has no header.");
  if (!ended || at !== bytes.length) return fail(ended ? "The PNG has data after its end." : "The PNG is truncated (no IEND).");
  if (idat.length === 0) return fail("The PNG has no image data.");
  if (header.colour === 3 && !palette) return fail("The PNG's palette is missing.");
  const sizeProblem = checkSize(header.width, header.height);
  if (sizeProblem) return fail(sizeProblem);
  const bitsPerPixel = header.depth * PNG_COLOUR_TYPES[header.colour]!.channels;
  const layout = scanlineLayout(header.width, header.height, bitsPerPixel, header.interlaced);
  const expected = layout.reduce((sum, [rows, rowBytes]) => sum + (rows === 0 ? 0 : rows * (rowBytes + 1)), 0);
  const compressed = new Uint8Array(idat.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of idat) {
    compressed.set(part, offset);
    offset += part.byteLength;
  }
  const raw = await inflateUpTo(compressed, expected);
  if (!raw || raw.byteLength !== expected) return fail("The PNG's image data is corrupt or incomplete.");
  let row = 0;
  for (const [rows, rowBytes] of layout) {
    for (let r = 0; r < rows; r++) {
      if (raw[row]! > 4) return fail("The PNG's image data is corrupt (bad scanline filter).");
      row += rowBytes + 1;
    }
  }
  return { ok: true, contentType: "image/png", width: header.width, height: header.height };
}

/** Frame headers ffmpeg and browsers decode: baseline, extended and progressive Huffman. */
const SUPPORTED_SOF = new Set([0xc0, 0xc1, 0xc2]);
const OTHER_SOF = new Set([0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function checkJpeg(bytes: Uint8Array): LogoCheck {
  let at = 2;
  let frame: { width: number; height: number } | null = null;
  let scans = 0;
  for (;;) {
    if (at >= bytes.length || bytes[at] !== 0xff) return fail("The JPEG is truncated or malformed (no end-of-image marker).");
    while (at < bytes.length && bytes[at] === 0xff) at++;
    if (at >= bytes.length) return fail("The JPEG is truncated.");
    const marker = bytes[at]!;
    at++;
    if (marker === 0xd9) break;
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x00) return fail("The JPEG has a misplaced marker.");
    if (marker === 0x01) continue;
    if (at + 2 > bytes.length) return fail("The JPEG is truncated.");
    const length = u16(bytes, at);
    if (length < 2 || at + length > bytes.length) return fail("The JPEG is truncated or has a malformed segment.");
    const body = at + 2;
    if (SUPPORTED_SOF.has(marker)) {
      if (frame || length < 8) return fail("The JPEG's frame header is malformed.");
      const components = bytes[body + 5]!;
      frame = { height: u16(bytes, body + 1), width: u16(bytes, body + 3) };
      if (length !== 8 + components * 3) return fail("The JPEG's frame header is malformed.");
      if (components !== 1 && components !== 3) return fail("Only greyscale and colour (YCbCr) JPEGs are supported, not CMYK.");
    } else if (OTHER_SOF.has(marker)) {
      return fail("This JPEG coding (lossless or arithmetic) is not supported: save it as a baseline or progressive JPEG.");
    }
    at += length;
    if (marker === 0xda) {
      if (!frame) return fail("The JPEG's scan comes before its frame header.");
      scans++;
      // Entropy-coded data runs to the next marker that is not a stuffed 0xFF00 or a restart marker.
      while (at < bytes.length) {
        if (bytes[at] === 0xff && at + 1 < bytes.length) {
          const next = bytes[at + 1]!;
          if (next !== 0x00 && !(next >= 0xd0 && next <= 0xd7) && next !== 0xff) break;
        }
        at++;
      }
    }
  }
  if (!frame) return fail("The JPEG has no frame header.");
  if (scans === 0) return fail("The JPEG has no image data.");
  const sizeProblem = checkSize(frame.width, frame.height);
  if (sizeProblem) return fail(sizeProblem);
  return { ok: true, contentType: "image/jpeg", width: frame.width, height: frame.height };
}

function checkSize(width: number, height: number): string | null {
  if (width === 0 || height === 0) return "The image has no pixels.";
  if (width > MAX_LOGO_PIXELS || height > MAX_LOGO_PIXELS) {
    return `The image is ${width}x${height} pixels; a logo may be at most ${MAX_LOGO_PIXELS} pixels on each side.`;
  }
  return null;
}

export async function checkLogoImage(bytes: Uint8Array): Promise<LogoCheck> {
  if (bytes.length >= 8 && PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return checkPng(bytes);
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return checkJpeg(bytes);
  return fail("The logo must be a PNG or JPEG image (judged by its bytes).");
}
