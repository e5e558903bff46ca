/**
 * PLATFORM_PROXY_URL: platform downloads leave through the operator's proxy,
 * and the engine's address rules still decide what may be reached. The
 * operator's proxy is a real CONNECT proxy on loopback that records what it
 * was asked; the target is a real TCP server.
 */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddressPolicy, Resolver } from "../../src/source/address-policy.ts";
import { startEgressProxy } from "../../src/source/egress-proxy.ts";
import { parseUpstreamProxy } from "../../src/source/upstream-proxy.ts";

/** The rules under test: only the target's port on loopback is "public"; everything else is refused. */
let targetPort = 0;
const policy: AddressPolicy = (target) => (target.port === targetPort ? null : `${target.address}:${target.port} is not allowed`);
const resolver: Resolver = async (hostname) => {
  if (hostname === "video.platform.test") return [{ address: "127.0.0.1", family: 4 }];
  throw new Error(`no such host ${hostname}`);
};

let target: net.Server;
let operatorProxy: http.Server;
const asked: { url: string; authorization: string | undefined }[] = [];

beforeAll(async () => {
  target = net.createServer((socket) => socket.end("hello from the platform"));
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetPort = (target.address() as AddressInfo).port;
  operatorProxy = http.createServer((_req, res) => res.writeHead(405).end());
  operatorProxy.on("connect", (req: http.IncomingMessage, client: net.Socket) => {
    asked.push({ url: req.url ?? "", authorization: req.headers["proxy-authorization"] });
    const [host, port] = (req.url ?? "").split(":");
    const onward = net.connect({ host, port: Number(port) }, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      onward.pipe(client);
      client.pipe(onward);
    });
    onward.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => operatorProxy.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => target.close(resolve));
  operatorProxy.closeAllConnections();
  await new Promise((resolve) => operatorProxy.close(resolve));
});

/** A CONNECT through the engine's egress proxy, as yt-dlp makes it; the answer's first line and what followed. */
function connectThrough(proxyUrl: string, authority: string): Promise<{ status: string; body: string }> {
  const { port } = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port: Number(port) }, () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: head.split("\r\n")[0] ?? "", body });
    });
  });
}

describe("the operator's platform proxy", () => {
  it("carries each allowed connection to the checked address, with its credentials", async () => {
    const upstream = parseUpstreamProxy(`http://op%40erator:s3cret@127.0.0.1:${(operatorProxy.address() as AddressInfo).port}`);
    const egress = await startEgressProxy({ policy, resolver, upstream });
    try {
      asked.length = 0;
      const answer = await connectThrough(egress.url, `video.platform.test:${targetPort}`);
      expect(answer.status).toBe("HTTP/1.1 200 Connection Established");
      expect(answer.body).toBe("hello from the platform");
      // The operator's proxy was asked for the address the rules checked, never the name.
      expect(asked).toEqual([{ url: `127.0.0.1:${targetPort}`, authorization: `Basic ${Buffer.from("op@erator:s3cret").toString("base64")}` }]);

      // A target the rules refuse never reaches the operator's proxy.
      asked.length = 0;
      const refused = await connectThrough(egress.url, "video.platform.test:1");
      expect(refused.status).toMatch(/^HTTP\/1\.1 403/);
      expect(asked).toEqual([]);
      expect(egress.refusals).toHaveLength(1);
      expect(egress.refusals[0]).toContain("127.0.0.1:1 is not allowed");
    } finally {
      await egress.close();
    }
  });

  it("says so when the operator's proxy cannot be reached", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const egress = await startEgressProxy({ policy, resolver, upstream: parseUpstreamProxy(`http://127.0.0.1:${port}`) });
    try {
      const answer = await connectThrough(egress.url, `video.platform.test:${targetPort}`);
      expect(answer.status).toMatch(/^HTTP\/1\.1 502/);
      expect(egress.refusals[0]).toMatch(new RegExp(`platform proxy http://127\\.0\\.0\\.1:${port} could not be reached`));
    } finally {
      await egress.close();
    }
  });

  it("takes only an http:// proxy URL, and none at all when unset", () => {
    expect(parseUpstreamProxy(undefined)).toBeNull();
    expect(parseUpstreamProxy("  ")).toBeNull();
    expect(parseUpstreamProxy("http://proxy.example:3128")).toEqual({ host: "proxy.example", port: 3128, authorization: null, display: "http://proxy.example:3128" });
    expect(() => parseUpstreamProxy("socks5://proxy.example:1080")).toThrow(/PLATFORM_PROXY_URL must be an http:\/\/ proxy URL/);
    expect(() => parseUpstreamProxy("not a url")).toThrow(/PLATFORM_PROXY_URL/);
  });
});
