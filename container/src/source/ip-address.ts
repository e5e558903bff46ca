import { isIP } from "node:net";

/**
 * Classifies IP addresses for the download path (SPEC section 7). Inputs are
 * canonical forms: URL hostnames after WHATWG parsing (which already turned
 * 127.1, 2130706433 and 0x7f.1 into 127.0.0.1) and DNS answers.
 */

interface Range4 {
  base: number;
  bits: number;
  label: string;
}

function v4(text: string): number {
  const parts = text.split(".").map(Number);
  return (((parts[0] ?? 0) << 24) | ((parts[1] ?? 0) << 16) | ((parts[2] ?? 0) << 8) | (parts[3] ?? 0)) >>> 0;
}

const BLOCKED_V4: Range4[] = [
  { base: v4("0.0.0.0"), bits: 8, label: "unspecified" },
  { base: v4("10.0.0.0"), bits: 8, label: "private" },
  { base: v4("100.64.0.0"), bits: 10, label: "carrier-grade NAT" },
  { base: v4("127.0.0.0"), bits: 8, label: "loopback" },
  { base: v4("169.254.0.0"), bits: 16, label: "link-local or metadata" },
  { base: v4("172.16.0.0"), bits: 12, label: "private" },
  { base: v4("192.0.0.0"), bits: 24, label: "reserved" },
  { base: v4("192.0.2.0"), bits: 24, label: "documentation" },
  { base: v4("192.168.0.0"), bits: 16, label: "private" },
  { base: v4("198.18.0.0"), bits: 15, label: "benchmarking" },
  { base: v4("198.51.100.0"), bits: 24, label: "documentation" },
  { base: v4("203.0.113.0"), bits: 24, label: "documentation" },
  { base: v4("224.0.0.0"), bits: 4, label: "multicast" },
  { base: v4("240.0.0.0"), bits: 4, label: "reserved or broadcast" },
];

function classifyV4(value: number): string | null {
  for (const range of BLOCKED_V4) {
    const mask = range.bits === 0 ? 0 : (0xffffffff << (32 - range.bits)) >>> 0;
    if ((value & mask) >>> 0 === range.base) return range.label;
  }
  return null;
}

/** Parses an IPv6 address (with optional embedded dotted quad) into 8 groups. */
export function parseIpv6(text: string): number[] | null {
  let address = text.toLowerCase();
  const zone = address.indexOf("%");
  if (zone >= 0) address = address.slice(0, zone);
  let tailGroups: number[] = [];
  const lastColon = address.lastIndexOf(":");
  const tail = address.slice(lastColon + 1);
  if (tail.includes(".")) {
    if (isIP(tail) !== 4) return null;
    const value = v4(tail);
    tailGroups = [value >>> 16, value & 0xffff];
    address = `${address.slice(0, lastColon + 1)}0:0`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const parseHalf = (half: string | undefined): number[] | null => {
    if (!half) return [];
    const groups: number[] = [];
    for (const group of half.split(":")) {
      if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
      groups.push(parseInt(group, 16));
    }
    return groups;
  };
  const head = parseHalf(halves[0]);
  const rest = parseHalf(halves[1]);
  if (!head || !rest) return null;
  let groups: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return null;
  if (tailGroups.length === 2) {
    groups[6] = tailGroups[0] ?? 0;
    groups[7] = tailGroups[1] ?? 0;
  }
  return groups;
}

function embeddedV4(high: number, low: number): number {
  return ((high << 16) | low) >>> 0;
}

function classifyV6(groups: number[]): string | null {
  const g = (i: number) => groups[i] ?? 0;
  const firstSixZero = [0, 1, 2, 3, 4, 5].every((i) => g(i) === 0);
  if (firstSixZero && g(6) === 0 && g(7) === 0) return "unspecified";
  if (firstSixZero && g(6) === 0 && g(7) === 1) return "loopback";
  const firstFiveZero = [0, 1, 2, 3, 4].every((i) => g(i) === 0);
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64
  // (64:ff9b::a.b.c.d) forms reach the embedded IPv4 address: judge that one.
  if ((firstFiveZero && g(5) === 0xffff) || firstSixZero) {
    const inner = classifyV4(embeddedV4(g(6), g(7)));
    return inner ? `${inner} (IPv4 inside IPv6)` : null;
  }
  if (g(0) === 0x64 && g(1) === 0xff9b && [2, 3, 4, 5].every((i) => g(i) === 0)) {
    const inner = classifyV4(embeddedV4(g(6), g(7)));
    return inner ? `${inner} (NAT64)` : null;
  }
  if (g(0) === 0x64 && g(1) === 0xff9b) return "local-use NAT64";
  if (g(0) === 0x2002) {
    const inner = classifyV4(embeddedV4(g(1), g(2)));
    return inner ? `${inner} (6to4)` : null;
  }
  if (g(0) === 0x2001 && g(1) === 0) return "Teredo tunnel";
  if (g(0) === 0x2001 && g(1) === 0xdb8) return "documentation";
  if (g(0) === 0x100 && g(1) === 0 && g(2) === 0 && g(3) === 0) return "discard";
  if ((g(0) & 0xfe00) === 0xfc00) return "unique-local or metadata";
  if ((g(0) & 0xffc0) === 0xfe80) return "link-local";
  if ((g(0) & 0xffc0) === 0xfec0) return "site-local";
  if ((g(0) & 0xff00) === 0xff00) return "multicast";
  return null;
}

/**
 * Why an address must not be contacted ("loopback", "private", ...), or null
 * for a public unicast address. Anything unparsable is refused.
 */
export function nonPublicReason(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return classifyV4(v4(address));
  if (family === 6) {
    const groups = parseIpv6(address);
    return groups ? classifyV6(groups) : "unparsable address";
  }
  return "not an IP address";
}
