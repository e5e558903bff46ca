/**
 * Reads a request body into memory up to a byte limit. The declared
 * Content-Length is checked first (413 before anything is read), then the
 * bytes are counted as they arrive, so a missing or lying length cannot carry
 * a larger body past the limit.
 */
import { AppError } from "./errors";

function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The request body exceeds ${maxBytes} bytes.`);
}

export async function readBodyCapped(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
    await request.body?.cancel();
    throw tooLarge(maxBytes);
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
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
