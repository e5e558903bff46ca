/**
 * Submission-time checks on `video_url` (SPEC section 7). The Worker cannot
 * resolve host names, so only literal addresses and reserved names are judged
 * here; the engine checks every resolved address and redirect hop again.
 * The WHATWG URL parser has already normalised odd IPv4 spellings
 * (0x7f.1, 2130706433, 0177.0.0.1) to dotted decimal, and IPv6 to hex groups.
 */
import { DomainError } from "./errors.ts";

export const MAX_VIDEO_URL_LENGTH = 2048;

/** [network, prefix length] of IPv4 ranges that are never a public source. */
const BLOCKED_IPV4: readonly [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

/** Names that only mean something inside a private network. */
function isReservedName(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (host.endsWith(".internal") || host.endsWith(".local") || host.endsWith(".home.arpa")) return true;
  // A single-label name resolves through local search domains, never publicly.
  return !host.includes(".");
}

function ipv4ToNumber(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

function isBlockedIpv4Number(value: number): boolean {
  return BLOCKED_IPV4.some(([network, bits]) => {
    const base = ipv4ToNumber(network) ?? 0;
    const size = 2 ** (32 - bits);
    return value >= base && value < base + size;
  });
}

/** Eight 16-bit groups of a serialized IPv6 address (no brackets), or null. */
function ipv6Groups(address: string): number[] | null {
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string): number[] | null => {
    if (part === "") return [];
    const groups: number[] = [];
    for (const piece of part.split(":")) {
      const v4 = ipv4ToNumber(piece);
      if (v4 !== null) {
        groups.push(Math.floor(v4 / 65536), v4 % 65536);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        groups.push(parseInt(piece, 16));
      } else {
        return null;
      }
    }
    return groups;
  };
  const head = parse(halves[0] ?? "");
  const tail = halves.length === 2 ? parse(halves[1] ?? "") : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  return [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
}

function isBlockedIpv6(address: string): boolean {
  const g = ipv6Groups(address);
  if (!g) return true; // unparseable: refuse rather than guess
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embeddedV4 = g6 * 65536 + g7;
  const firstSixZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstSixZero && g5 === 0) return true; // ::, ::1 and IPv4-compatible ::a.b.c.d
  if (firstSixZero && g5 === 0xffff) return isBlockedIpv4Number(embeddedV4); // IPv4-mapped
  if (g0 === 0x64 && g1 === 0xff9b) return isBlockedIpv4Number(embeddedV4); // NAT64
  if (g0 === 0x2002) return isBlockedIpv4Number(g1 * 65536 + g2); // 6to4
  if ((g0 & 0xfe00) === 0xfc00) return true; // unique local (incl. cloud metadata fd00:ec2::254)
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return true; // link-local, site-local
  if ((g0 & 0xff00) === 0xff00) return true; // multicast
  if (g0 === 0x2001 && (g1 === 0x0db8 || g1 === 0)) return true; // documentation, Teredo
  return false;
}

/** True for hosts that are loopback, private, link-local, metadata or otherwise not public. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[") && host.endsWith("]")) return isBlockedIpv6(host.slice(1, -1));
  const v4 = ipv4ToNumber(host);
  if (v4 !== null) return isBlockedIpv4Number(v4);
  return isReservedName(host);
}

type UrlField = "video_url" | "captions_url";

const FIELD_CODES = { video_url: "invalid_video_url", captions_url: "invalid_captions_url" } as const;

function invalidField(field: UrlField, detail: string): DomainError {
  return new DomainError(FIELD_CODES[field], detail, { errors: [{ path: field, message: detail }] });
}

/** The normalised URL, or an invalid_video_url error saying what is wrong. */
export function checkVideoUrl(raw: string, allowPrivateHosts: boolean): string {
  return checkSourceUrl("video_url", raw, allowPrivateHosts);
}

/** `captions_url` follows the same rules as `video_url` (the engine fetches it the same way); invalid_captions_url. */
export function checkCaptionsUrl(raw: string, allowPrivateHosts: boolean): string {
  return checkSourceUrl("captions_url", raw, allowPrivateHosts);
}

function checkSourceUrl(field: UrlField, raw: string, allowPrivateHosts: boolean): string {
  const invalid = (detail: string): DomainError => invalidField(field, `${field} ${detail}`);
  if (raw.length > MAX_VIDEO_URL_LENGTH) throw invalid(`is longer than ${MAX_VIDEO_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid("is not a valid absolute URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid("must use http or https.");
  if (url.username !== "" || url.password !== "") throw invalid("must not contain credentials.");
  if (url.hostname === "") throw invalid("has no host.");
  if (!allowPrivateHosts && isPrivateHost(url.hostname)) {
    throw invalid("points to a private, loopback, link-local or metadata address.");
  }
  const normalised = url.toString();
  if (normalised.length > MAX_VIDEO_URL_LENGTH) throw invalid(`is longer than ${MAX_VIDEO_URL_LENGTH} characters.`);
  return normalised;
}
