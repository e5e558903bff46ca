/**
 * Reads a request body into memory up to a byte limit. The declared
 * Content-Length is checked first (413 before anything is read), then the
 * bytes are counted as they arrive, so a missing or lying length cannot carry
 * a larger body past the limit. A refused body is left as it is, neither
 * canceled nor read on: drainUnreadBody (unread-body.ts) reads the rest
 * before the 413 leaves, so the answer reaches the client on every path.
 */
import { AppError } from "./errors.ts";

export function bodyTooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The request body exceeds ${maxBytes} bytes.`);
}

export async function readBodyCapped(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > maxBytes) throw bodyTooLarge(maxBytes);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw bodyTooLarge(maxBytes);
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(contentType: string | undefined | null): string {
  return (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
}
