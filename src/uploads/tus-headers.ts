/**
 * The tus 1.0 header rules (https://tus.io/protocols/resumable-upload):
 * version negotiation, Upload-Length / Upload-Offset as non-negative
 * integers, and Upload-Metadata as comma-separated `key base64value` pairs.
 */
import { DomainError } from "../domain/errors.ts";
import { fileNameFromMetadata, parseMetadataHeader } from "./tus-metadata.ts";

export const TUS_VERSION = "1.0.0";
export const TUS_EXTENSIONS = ["creation", "termination", "expiration"] as const;
export const PATCH_CONTENT_TYPE = "application/offset+octet-stream";

/** Every tus answer (except OPTIONS) carries these. */
export const TUS_RESPONSE_HEADERS = { "Tus-Resumable": TUS_VERSION, "Cache-Control": "no-store" } as const;

export function checkTusVersion(header: string | undefined): void {
  if (header?.trim() === TUS_VERSION) return;
  throw new DomainError("tus_version_unsupported", `Send Tus-Resumable: ${TUS_VERSION}; this server speaks tus ${TUS_VERSION} only.`, {
    headers: { "Tus-Version": TUS_VERSION },
  });
}

/** A header that must hold a non-negative integer (no sign, no spaces inside, safe in a double). */
export function parseByteCount(name: string, header: string | undefined): number {
  const text = header?.trim() ?? "";
  if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new DomainError("invalid_request", `${name} must be a non-negative integer number of bytes.`, {
      errors: [{ path: name, message: header === undefined ? "missing" : "not a non-negative integer" }],
    });
  }
  return Number(text);
}

export interface UploadMetadata {
  /** The header as sent, echoed on HEAD. */
  raw: string | null;
  values: Map<string, string | null>;
}

export function parseMetadata(header: string | undefined): UploadMetadata {
  if (header === undefined || header.trim() === "") return { raw: null, values: new Map() };
  const parsed = parseMetadataHeader(header);
  if (!parsed.ok) {
    throw new DomainError("invalid_request", `Upload-Metadata: ${parsed.message}`, { errors: [{ path: "Upload-Metadata", message: parsed.message }] });
  }
  return { raw: header.trim(), values: parsed.values };
}

/** The file name a client gave, without any path, cut on code points (tus-metadata.ts). */
export function fileNameOf(metadata: UploadMetadata): string | null {
  return fileNameFromMetadata(metadata.values);
}

export function isPatchContentType(header: string | undefined): boolean {
  return header?.split(";", 1)[0]!.trim().toLowerCase() === PATCH_CONTENT_TYPE;
}
