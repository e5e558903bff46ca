/** Hostile strings: unicode edge cases, control characters, path tricks, and sizes near and over the limits. */
import fc from "fast-check";

/** Hand-picked cases a random generator rarely hits. */
export const EDGE_STRINGS: readonly string[] = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uD800", // lone high surrogate
  "\uDFFF", // lone low surrogate
  "x\uDC00y",
  "\u202Eevil\u202C", // right-to-left override
  "\u05E9\u05DC\u05D5\u05DD", // Hebrew (RTL)
  "\uFEFF", // byte order mark
  "\u200B\u200D", // zero-width space and joiner
  "\uD83D\uDC69\u200D\uD83D\uDC69\u200D\uD83D\uDC67", // family emoji (ZWJ sequence)
  "\uD83C\uDFF3\uFE0F\u200D\uD83C\uDF08",
  "e\u0301", // NFD
  "\u00E9", // NFC
  "\uFB00", // NFKC folds to "ff"
  "\u212B", // Angstrom sign, NFC folds to \u00C5
  "\u0130", // dotted capital I: case mapping changes length
  "\r\n",
  "\t",
  "../../etc/passwd",
  "..%2f..%2fetc%2fpasswd",
  "%00",
  "%",
  "%E0%A4%A",
  "%25",
  "%2e%2e",
  "null",
  "true",
  "0",
  "-1",
  "1e309",
  "NaN",
  "__proto__",
  "constructor",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "\"; DROP TABLE jobs; --",
  "${jndi:ldap://x}",
  "podcast\u0000",
  "Podcast",
  "podcast ",
  "9:16",
  "job_",
  "job_aaaaaaaaaaaaaaaaaaaa",
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.nat({ max: 20_000 }).map((n) => "x".repeat(n)) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...EDGE_STRINGS), fc.string({ maxLength: 10 })).map(([a, b]) => a + b) },
);

/** Strings usable inside a URL path or query (percent-encoded hostile strings, dot segments, encoded slashes). */
export const hostilePathPart: fc.Arbitrary<string> = fc.oneof(
  hostileString.map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, "?"))),
  fc.constantFrom(
    "..", ".", "%2e%2e", "%2E%2E%2F", "%2f", "%2F..%2F", "..%5c", "%5C", "%00", "%", "%zz", "%E0%A4%A", "%25E0%A4%A",
    "%C0%AF", "%ED%A0%80", "%FF", "a%2Fb", "a;b", "a?b", "a#b", "~", "*", ".well-known", "%20", "+", "job_%41",
  ),
  fc.nat({ max: 9_000 }).map((n) => "a".repeat(n)),
  fc.stringMatching(/^[A-Za-z0-9_%.~-]{0,30}$/),
);
