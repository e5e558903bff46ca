/**
 * The tus Upload-Metadata header (comma-separated `key base64value` pairs)
 * and the file name a client gives in it. Pure and imports nothing, so the
 * Node suites can measure it (test/parsers/linear-time.test.ts): every step
 * is a split or an anchored regex without nested quantifiers, so the time is
 * linear in the header.
 */

export const MAX_METADATA_CHARS = 4096;
/** Longest file name kept, in code points (a cut never splits a character). */
export const MAX_FILE_NAME_CODE_POINTS = 255;

export type MetadataParse = { ok: true; values: Map<string, string | null> } | { ok: false; message: string };

const METADATA_KEY = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function decodeBase64Utf8(value: string): string | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) return null;
  try {
    const bytes = Uint8Array.from(atob(value), (ch) => ch.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

/** The pairs of a non-empty header, or why it is not one. */
export function parseMetadataHeader(header: string): MetadataParse {
  if (header.length > MAX_METADATA_CHARS) return { ok: false, message: `at most ${MAX_METADATA_CHARS} characters.` };
  const values = new Map<string, string | null>();
  for (const pair of header.split(",")) {
    const [key = "", encoded, ...extra] = pair.trim().split(" ");
    if (!METADATA_KEY.test(key) || extra.length > 0) return { ok: false, message: `"${pair.trim().slice(0, 40)}" is not a "key base64value" pair.` };
    if (values.has(key)) return { ok: false, message: `the key ${key} appears twice.` };
    if (encoded === undefined || encoded === "") {
      values.set(key, null);
      continue;
    }
    const decoded = decodeBase64Utf8(encoded);
    if (decoded === null) return { ok: false, message: `the value of ${key} is not base64-encoded UTF-8.` };
    values.set(key, decoded);
  }
  return { ok: true, values };
}

/**
 * The file name a client gave (tus-js-client and Uppy send `filename` and/or
 * `name`), without any path or control characters, at most
 * MAX_FILE_NAME_CODE_POINTS code points and always well-formed UTF-16 (the
 * job's source URL is built from it with encodeURIComponent, which throws on
 * half a surrogate pair).
 */
export function fileNameFromMetadata(values: Map<string, string | null>): string | null {
  const name = values.get("filename") ?? values.get("name") ?? null;
  if (name === null) return null;
  // eslint-disable-next-line no-control-regex
  const base = name.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  // Code points take at most two UTF-16 units: the first 2 x 255 units hold every one that is kept.
  const cut = Array.from(wellFormed(base.slice(0, 2 * MAX_FILE_NAME_CODE_POINTS))).slice(0, MAX_FILE_NAME_CODE_POINTS).join("").trim();
  return cut === "" ? null : cut;
}

/** Lone surrogates replaced by U+FFFD (String.prototype.toWellFormed, spelled out for ES2022 typings). */
export function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}
