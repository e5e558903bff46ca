/**
 * Small real images for the logo tests, built in the Workers runtime: PNGs
 * written chunk by chunk (zlib via CompressionStream), with a choice of
 * defects, and one JPEG that ffmpeg 5.1 wrote (a 16x12 blue frame:
 * `ffmpeg -f lavfi -i color=c=0x2060C0:s=16x12,format=yuvj420p -frames:v 1 -q:v 5 tiny.jpg`).
 */

export const TINY_JPEG = Uint8Array.from(
  atob(
    "/9j/4AAQSkZJRgABAgAAAQABAAD//gAQTGF2YzU5LjM3LjEwMAD/2wBDAAgKCgsKCw0NDQ0NDRAPEBAQEBAQEBAQEBASEhIVFRUSEhIQEBISFBQVFRcXFxUVFRUXFxkZGR4eHBwjIyQrKzP/xABLAAEBAAAAAAAAAAAAAAAAAAAABgEBAAAAAAAAAAAAAAAAAAAABhABAAAAAAAAAAAAAAAAAAAABhEBAAAAAAAAAAAAAAAAAAAAAP/AABEIAAwAEAMBIgACEQADEQD/2gAMAwEAAhEDEQA/AJcA6F3/2Q==",
  ),
  (c) => c.charCodeAt(0),
);

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function u32(value: number): Uint8Array {
  return new Uint8Array([(value >>> 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const typed = concat([new TextEncoder().encode(type), data]);
  return concat([u32(data.byteLength), typed, u32(crc32(typed))]);
}

async function zlib(raw: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export interface PngOptions {
  width: number;
  height: number;
  /** Cut the file short by this many bytes. */
  truncate?: number;
  /** Give the image data fewer rows than the header promises. */
  missingRows?: number;
  /** Break the IDAT chunk's CRC. */
  badCrc?: boolean;
  /** Pad the image data with random bytes so the file reaches about this size (stored, incompressible). */
  padToBytes?: number;
}

/** An RGBA PNG: a red square on transparency, 8 bits per channel. */
export async function makePng(options: PngOptions): Promise<Uint8Array> {
  const { width, height } = options;
  const rows = height - (options.missingRows ?? 0);
  const raw = new Uint8Array(rows * (1 + width * 4));
  for (let y = 0; y < rows; y++) {
    const row = y * (1 + width * 4);
    for (let x = 0; x < width; x++) {
      const inside = x > width / 4 && x < (3 * width) / 4 && y > height / 4 && y < (3 * height) / 4;
      raw.set(inside ? [220, 30, 30, 255] : [0, 0, 0, 0], row + 1 + x * 4);
    }
  }
  const ihdr = concat([u32(width), u32(height), new Uint8Array([8, 6, 0, 0, 0])]);
  const idat = await zlib(raw);
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", idat)];
  if (options.padToBytes) {
    // An ancillary text chunk of noise: the file grows, the image stays valid.
    const sizeSoFar = parts.reduce((n, p) => n + p.byteLength, 0) + 12 /* IEND */ + 12 /* this chunk's framing */;
    const noise = new Uint8Array(Math.max(0, options.padToBytes - sizeSoFar));
    for (let i = 0; i < noise.length; i += 65536) crypto.getRandomValues(noise.subarray(i, Math.min(noise.length, i + 65536)));
    parts.push(chunk("zzXx", noise));
  }
  parts.push(chunk("IEND", new Uint8Array(0)));
  let png = concat(parts);
  if (options.badCrc) {
    // The IDAT chunk's CRC sits right after its data.
    const at = 8 + 25 + 8 + idat.byteLength;
    png[at] = png[at]! ^ 0xff;
  }
  if (options.truncate) png = png.slice(0, png.byteLength - options.truncate);
  return png;
}
