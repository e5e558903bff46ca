import { describe, expect, it } from "vitest";
import { nonPublicReason, parseIpv6 } from "../../src/source/ip-address.ts";

/** What the download path sees for a URL host: WHATWG hostname, brackets removed. */
function hostOf(url: string): string {
  const host = new URL(url).hostname;
  return host.startsWith("[") ? host.slice(1, -1) : host;
}

describe("nonPublicReason", () => {
  it.each([
    ["http://127.0.0.1/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://[::1]/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback (IPv4 inside IPv6)"],
    ["http://[0:0:0:0:0:ffff:7f00:1]/", "loopback (IPv4 inside IPv6)"],
    ["http://[::127.0.0.1]/", "loopback (IPv4 inside IPv6)"],
    ["http://[64:ff9b::7f00:1]/", "loopback (NAT64)"],
    ["http://[2002:7f00:1::]/", "loopback (6to4)"],
    ["http://169.254.169.254/", "link-local or metadata"],
    ["http://[::ffff:169.254.169.254]/", "link-local or metadata (IPv4 inside IPv6)"],
    ["http://[fd00:ec2::254]/", "unique-local or metadata"],
    ["http://10.1.2.3/", "private"],
    ["http://172.16.0.1/", "private"],
    ["http://172.31.255.255/", "private"],
    ["http://192.168.1.1/", "private"],
    ["http://100.64.0.1/", "carrier-grade NAT"],
    ["http://0.0.0.0/", "unspecified"],
    ["http://0/", "unspecified"],
    ["http://[::]/", "unspecified"],
    ["http://224.0.0.1/", "multicast"],
    ["http://255.255.255.255/", "reserved or broadcast"],
    ["http://[fe80::1]/", "link-local"],
    ["http://[fc00::1]/", "unique-local or metadata"],
    ["http://[ff02::1]/", "multicast"],
  ])("%s is refused as %s", (url, reason) => {
    expect(nonPublicReason(hostOf(url))).toBe(reason);
  });

  it.each(["http://8.8.8.8/", "http://172.32.0.1/", "http://100.128.0.1/", "http://[2606:4700::1111]/", "http://[::ffff:8.8.8.8]/", "http://1.1.1.1/"])(
    "%s is public",
    (url) => {
      expect(nonPublicReason(hostOf(url))).toBeNull();
    },
  );

  it("refuses names and garbage rather than guessing", () => {
    expect(nonPublicReason("localhost")).not.toBeNull();
    expect(nonPublicReason("1:2:3")).not.toBeNull();
  });

  it("parses compressed and dotted IPv6 forms", () => {
    expect(parseIpv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIpv6("2001:db8::1")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    expect(parseIpv6("1::2::3")).toBeNull();
  });
});
