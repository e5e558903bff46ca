import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import { checkVideoUrl, isPrivateHost } from "../../src/domain/source-url.ts";

describe("isPrivateHost", () => {
  it.each([
    "127.0.0.1",
    "10.0.0.1",
    "100.64.0.1",
    "169.254.169.254",
    "172.16.0.1",
    "192.168.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "[::]",
    "[::1]",
    "[::ffff:a00:1]",
    "[64:ff9b::7f00:1]",
    "[2002:c0a8:101::1]",
    "[fc00::1]",
    "[fe80::abcd]",
    "[ff02::1]",
    "[2001:db8::1]",
    "localhost",
    "api.localhost",
    "metadata.google.internal",
    "printer.local",
    "intranet",
  ])("refuses %s", (host) => {
    expect(isPrivateHost(host)).toBe(true);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "[2606:4700::1111]", "[::ffff:808:808]", "www.youtube.com", "cdn.example.org"])(
    "accepts %s",
    (host) => {
      expect(isPrivateHost(host)).toBe(false);
    },
  );
});

describe("checkVideoUrl", () => {
  it("normalises odd IPv4 spellings before judging them", () => {
    for (const url of ["http://0x7f000001/", "http://127.1/", "http://0177.0.0.01/", "http://2130706433/"]) {
      expect(() => checkVideoUrl(url, false), url).toThrowError(DomainError);
    }
  });

  it("allows private hosts only when told to (local development)", () => {
    expect(checkVideoUrl("http://127.0.0.1:9000/clip.mp4", true)).toBe("http://127.0.0.1:9000/clip.mp4");
    expect(() => checkVideoUrl("http://127.0.0.1:9000/clip.mp4", false)).toThrowError(/private/);
  });

  it("still refuses credentials and other schemes when private hosts are allowed", () => {
    expect(() => checkVideoUrl("http://u:p@127.0.0.1/x.mp4", true)).toThrowError(/credentials/);
    expect(() => checkVideoUrl("gopher://127.0.0.1/x", true)).toThrowError(/http or https/);
  });
});
