/**
 * The `wait` preference of an RFC 7240 `Prefer` request header. A
 * preference may always be ignored, so anything this cannot use (absent,
 * malformed, zero) is null, never an error. The header is scanned once,
 * left to right, with no regular expression over the whole of it.
 */

/** The longest wait honoured, in seconds; a larger one is cut to this. */
export const MAX_WAIT_SECONDS = 60;

/**
 * Splits `text` at `separator` where it is not inside a quoted string
 * (RFC 9110 quoted-string, with backslash escapes).
 */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quoted && char === "\\") i += 1;
    else if (char === '"') quoted = !quoted;
    else if (!quoted && char === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** A `word` (token or quoted-string) as its plain value. */
function unquoted(word: string): string {
  if (word.length >= 2 && word.startsWith('"') && word.endsWith('"')) return word.slice(1, -1).replace(/\\(.)/g, "$1");
  return word;
}

function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (const char of text) if (char < "0" || char > "9") return false;
  return true;
}

/**
 * Seconds to wait, 1..MAX_WAIT_SECONDS, from `Prefer: wait=N` (several
 * Prefer headers arrive joined by commas); null when there is no usable wait
 * preference. Names are case-insensitive, parameters after `;` are ignored,
 * and only the first `wait` counts (RFC 7240 section 2).
 */
export function preferredWaitSeconds(header: string | null | undefined): number | null {
  if (!header) return null;
  for (const preference of splitOutsideQuotes(header, ",")) {
    const head = splitOutsideQuotes(preference, ";")[0] ?? "";
    const equals = head.indexOf("=");
    const name = (equals === -1 ? head : head.slice(0, equals)).trim().toLowerCase();
    if (name !== "wait") continue;
    if (equals === -1) return null;
    const value = unquoted(head.slice(equals + 1).trim());
    if (!isDigits(value)) return null;
    // Any run of digits is a number (a very long one is Infinity, then the cap).
    const seconds = Number(value);
    return seconds < 1 ? null : Math.min(seconds, MAX_WAIT_SECONDS);
  }
  return null;
}
