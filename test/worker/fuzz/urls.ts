/** video_url values: public URLs that must be accepted, and hostile ones that must not. */
import fc from "fast-check";
import { hostileString } from "./strings.ts";

/** Sources that SPEC section 7 refuses at submission: other schemes, credentials, loopback, private and metadata hosts. */
export const HOSTILE_URLS: readonly string[] = [
  "file:///etc/passwd",
  "ftp://videos.example.com/a.mp4",
  "javascript:alert(1)",
  "data:video/mp4;base64,AAAA",
  "gopher://videos.example.com/",
  "http://user:pass@videos.example.com/a.mp4",
  "https://user@videos.example.com/a.mp4",
  "http://localhost/a.mp4",
  "http://LOCALHOST./a.mp4",
  "http://api.localhost/a.mp4",
  "http://127.0.0.1/a.mp4",
  "http://127.1/a.mp4",
  "http://0x7f.1/a.mp4",
  "http://2130706433/a.mp4",
  "http://0177.0.0.1/a.mp4",
  "http://0.0.0.0/a.mp4",
  "http://[::1]/a.mp4",
  "http://[::]/a.mp4",
  "http://[::ffff:127.0.0.1]/a.mp4",
  "http://[::ffff:7f00:1]/a.mp4",
  "http://10.0.0.1/a.mp4",
  "http://172.16.5.4/a.mp4",
  "http://192.168.1.1/a.mp4",
  "http://169.254.169.254/latest/meta-data/",
  "http://[fd00:ec2::254]/",
  "http://[fe80::1]/a.mp4",
  "http://metadata.google.internal/computeMetadata/v1/",
  "http://printer.local/a.mp4",
  "http://intranet/a.mp4",
  "http://100.64.0.1/a.mp4",
  "http://[64:ff9b::7f00:1]/a.mp4",
  "http://[2002:7f00:1::]/a.mp4",
  "https://videos.example.com/" + "a".repeat(2100),
  "http://",
  "https:///a.mp4",
  "//videos.example.com/a.mp4",
  "videos.example.com/a.mp4",
];

/** Public http(s) URLs without credentials: every one of them is a valid video_url. */
export const publicUrl: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom("http", "https"),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,20}[a-z0-9]$/),
    fc.constantFrom("com", "org", "net", "io", "tv", "example"),
    fc.webPath(),
    fc.option(fc.webQueryParameters(), { nil: undefined }),
  )
  .map(([scheme, label, tld, path, query]) => `${scheme}://${label}.${tld}${path}${query === undefined ? "" : `?${query}`}`)
  .filter((url) => url.length <= 2000);

export const anyVideoUrl: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: publicUrl },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_URLS) },
  { weight: 1, arbitrary: fc.webUrl({ withFragments: true, withQueryParameters: true }) },
  { weight: 1, arbitrary: hostileString },
);

const PRIVATE_V4 = /^(0|10|127)\.|^169\.254\.|^192\.168\.|^172\.(1[6-9]|2\d|3[01])\.|^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./;

/**
 * An independent reading of what an accepted (stored) video_url must look
 * like: http(s), no credentials, a public-looking host. Deliberately coarser
 * than the service's own check; it must never disagree on the hostile list.
 */
export function acceptableStoredUrl(stored: string): string | null {
  let url: URL;
  try {
    url = new URL(stored);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `scheme ${url.protocol}`;
  if (url.username !== "" || url.password !== "") return "credentials";
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (!host.includes(".") && !host.startsWith("[")) return "single-label host";
  if (host === "localhost" || /\.(localhost|local|internal)$/.test(host)) return "reserved name";
  // The URL parser writes every IPv4 spelling as four decimals; "0.example.com" is a name, not an address.
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host) && PRIVATE_V4.test(host)) return "private IPv4";
  if (/^\[(::|fc|fd|fe8|::ffff:(7f|a|c0a8))/.test(host)) return "private IPv6";
  if (stored.length > 2048) return "too long";
  return null;
}
