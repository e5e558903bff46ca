import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import net from "node:net";
import { JobFailure, errorMessage } from "../shared/errors.ts";
import type { AddressPolicy, Resolver } from "./address-policy.ts";
import { checkedAddress } from "./safe-fetch.ts";
import { tunnelThrough, type UpstreamProxy } from "./upstream-proxy.ts";

/**
 * A forward proxy on loopback, one per platform download, through which all of
 * yt-dlp's traffic goes (`--proxy`, and the proxy variables for the programs it
 * starts). yt-dlp resolves names and follows redirects itself, so the download
 * rules cannot be applied to its URLs in advance: this proxy applies them to
 * every connection instead. Each CONNECT tunnel (https) and each plain http
 * request has its host resolved, every address checked by the same policy as
 * direct downloads, and the connection pinned to the checked address. A refused
 * target gets 403 and is remembered, so the job's failure can say why.
 */
export interface EgressProxy {
  /** http://127.0.0.1:port */
  url: string;
  /** Why targets were refused, in order. */
  refusals: string[];
  close(): Promise<void>;
}

export interface EgressProxyOptions {
  policy: AddressPolicy;
  resolver: Resolver;
  /** The operator's proxy (PLATFORM_PROXY_URL): connections leave through it, to the checked addresses. */
  upstream?: UpstreamProxy | null;
}

const HOP_BY_HOP = ["proxy-connection", "proxy-authorization", "connection", "keep-alive", "te", "trailer", "upgrade"];

function refuse(socket: Socket, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${status === 403 ? "Forbidden" : "Bad Gateway"}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const refusals: string[] = [];
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };

  /** The pinned address for host:port, or null after answering the refusal. */
  const check = async (target: URL): Promise<{ address: string; refusal: null } | { address: null; refusal: string }> => {
    try {
      const pinned = await checkedAddress(target, options.policy, options.resolver);
      return { address: pinned.address, refusal: null };
    } catch (error) {
      const reason = error instanceof JobFailure ? error.message : errorMessage(error);
      refusals.push(reason);
      return { address: null, refusal: reason };
    }
  };

  const server = http.createServer(async (req, res) => {
    // Absolute-form requests: plain http through the proxy.
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("absolute URL required\n");
      return;
    }
    if (target.protocol !== "http:" || target.username !== "" || target.password !== "") {
      res.writeHead(403).end("only plain http URLs without credentials are proxied this way\n");
      return;
    }
    const checked = await check(target);
    if (checked.address === null) {
      res.writeHead(403, { "content-type": "text/plain" }).end(`${checked.refusal}\n`);
      return;
    }
    const headers = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    const targetPort = target.port === "" ? 80 : Number(target.port);
    const via = options.upstream;
    // Through the operator's proxy: the absolute form, naming the checked address (the Host header keeps the name).
    const pinnedHost = net.isIPv6(checked.address) ? `[${checked.address}]` : checked.address;
    const upstream = http.request({
      host: via ? via.host : checked.address,
      port: via ? via.port : targetPort,
      method: req.method,
      path: via ? `http://${pinnedHost}:${targetPort}${target.pathname}${target.search}` : `${target.pathname}${target.search}`,
      headers: { ...headers, host: target.host, ...(via?.authorization ? { "proxy-authorization": via.authorization } : {}) },
      agent: false,
    });
    upstream.on("socket", track);
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502).end(`${errorMessage(error)}\n`);
      else res.destroy();
    });
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  server.on("connection", track);

  server.on("connect", async (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    // CONNECT's target is host:port (IPv6 in brackets), nothing else.
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/@\s]+):(\d{1,5})$/.exec(req.url ?? "");
    let target: URL;
    try {
      if (!match) throw new Error("not host:port");
      target = new URL(`https://${match[1]}:${match[2]}/`);
    } catch {
      refuse(client, 403, "CONNECT needs host:port");
      return;
    }
    const port = Number(match[2]);
    const checked = await check(target);
    if (checked.address === null) {
      refuse(client, 403, checked.refusal);
      return;
    }
    if (options.upstream) {
      let tunnel;
      try {
        tunnel = await tunnelThrough(options.upstream, checked.address, port);
      } catch (error) {
        refusals.push(errorMessage(error));
        refuse(client, 502, errorMessage(error));
        return;
      }
      const upstream = tunnel.socket;
      track(upstream);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (tunnel.rest.length > 0) client.write(tunnel.rest);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      return;
    }
    const upstream = net.connect({ host: checked.address, port });
    track(upstream);
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", (error) => {
      if (client.writable && upstream.connecting) refuse(client, 502, errorMessage(error));
      else client.destroy();
    });
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refusals,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
