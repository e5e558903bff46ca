/**
 * The tus 1.0 header rules (https://tus.io/protocols/resumable-upload):
 * version negotiation, Upload-Length / Upload-Offset as non-negative
 * integers, and Upload-Metadata as comma-separated `key base64value` pairs.
 */
import { AppError } from "../http/errors";

export const TUS_VERSION = "1.0.0";
export const TUS_EXTENSIONS = ["creation", "termination", "expiration"] as const;
export const PATCH_CONTENT_TYPE = "application/offset+octet-stream";

/** Every tus answer (except OPTIONS) carries these. */
export const TUS_RESPONSE_HEADERS = { "Tus-Resumable": TUS_VERSION, "Cache-Control": "no-store" } as const;

export function checkTusVersion(header: string | undefined): void {
  if (header?.trim() === TUS_VERSION) return;
  throw new AppError("tus_version_unsupported", `Send Tus-Resumable: ${TUS_VERSION}; this server speaks tus ${TUS_VERSION} only.`, {
    headers: { "Tus-Version": TUS_VERSION },
  });
}

/** A header that must hold a non-negative integer (no sign, no spaces inside, safe in a double). */
export function parseByteCount(name: string, header: string | undefined): number {
  const text = header?.trim() ?? "";
  if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new AppError("invalid_request", `${name} must be a non-negative integer number of bytes.`, {
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

const METADATA_KEY = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const MAX_METADATA_CHARS = 4096;

function decodeBase64Utf8(value: string): string | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) return null;
  try {
    const bytes = Uint8Array.from(atob(value), (ch) => ch.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

export function parseMetadata(header: string | undefined): UploadMetadata {
  if (header === undefined || header.trim() === "") return { raw: null, values: new Map() };
  const invalid = (message: string) =>
    new AppError("invalid_request", `Upload-Metadata: ${message}`, { errors: [{ path: "Upload-Metadata", message }] });
  if (header.length > MAX_METADATA_CHARS) throw invalid(`at most ${MAX_METADATA_CHARS} characters.`);
  const values = new Map<string, string | null>();
  for (const pair of header.split(",")) {
    const [key = "", encoded, ...extra] = pair.trim().split(" ");
    if (!METADATA_KEY.test(key) || extra.length > 0) throw invalid(`"${pair.trim().slice(0, 40)}" is not a "key base64value" pair.`);
    if (values.has(key)) throw invalid(`the key ${key} appears twice.`);
    if (encoded === undefined || encoded === "") {
      values.set(key, null);
      continue;
    }
    const decoded = decodeBase64Utf8(encoded);
    if (decoded === null) throw invalid(`the value of ${key} is not base64-encoded UTF-8.`);
    values.set(key, decoded);
  }
  return { raw: header.trim(), values };
}

/** The file name a client gave (tus-js-client and Uppy send `filename` and/or `name`), without any path. */
export function fileNameOf(metadata: UploadMetadata): string | null {
  const name = metadata.values.get("filename") ?? metadata.values.get("name") ?? null;
  if (name === null) return null;
  // eslint-disable-next-line no-control-regex
  const base = name.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  return base === "" ? null : base.slice(0, 255);
}

export function isPatchContentType(header: string | undefined): boolean {
  return header?.split(";", 1)[0]!.trim().toLowerCase() === PATCH_CONTENT_TYPE;
}
