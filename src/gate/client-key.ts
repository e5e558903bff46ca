/**
 * The unit a client-address limit counts: an IPv4 address, or the /64 prefix
 * of an IPv6 address (one subscriber commonly holds a whole /64, so counting
 * single IPv6 addresses would let one client rotate through billions).
 */
function expandIpv6(address: string): string[] | null {
  const bare = address.split("%")[0] ?? address;
  const halves = bare.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  // An embedded IPv4 tail (::ffff:1.2.3.4) takes two groups.
  const last = tail.length > 0 ? tail : head;
  const dotted = last.at(-1);
  if (dotted?.includes(".")) {
    const octets = dotted.split(".").map(Number);
    if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) return null;
    last.splice(-1, 1, ((octets[0]! << 8) | octets[1]!).toString(16), ((octets[2]! << 8) | octets[3]!).toString(16));
  }
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array.from({ length: halves.length === 2 ? missing : 0 }, () => "0"), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  return groups.map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""));
}

/** The counted unit of a client address: IPv4 as is, IPv6 as its /64 prefix, anything else as given. */
export function clientKey(address: string): string {
  const trimmed = address.trim();
  if (!trimmed.includes(":")) return trimmed;
  const groups = expandIpv6(trimmed);
  return groups ? `${groups.slice(0, 4).join(":")}::/64` : trimmed;
}
