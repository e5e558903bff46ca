import net, { type Socket } from "node:net";

/**
 * The operator's own egress proxy for platform downloads (PLATFORM_PROXY_URL):
 * platforms that refuse data-centre addresses ("Sign in to confirm you're not
 * a bot") or a country's viewers can be reached from the proxy's address
 * instead. Only an http:// proxy that takes CONNECT is supported; credentials
 * in its URL become a Basic Proxy-Authorization header.
 *
 * The engine's own egress proxy (egress-proxy.ts) still resolves and checks
 * every target first and asks the upstream proxy for the checked address, not
 * the name, so the address rules hold exactly as without it.
 */
export interface UpstreamProxy {
  host: string;
  port: number;
  /** The Proxy-Authorization header's value, or null. */
  authorization: string | null;
  /** For messages: the proxy without its credentials. */
  display: string;
}

/** Parses PLATFORM_PROXY_URL; throws a message naming the setting when it is not a usable http proxy URL. */
export function parseUpstreamProxy(value: string | undefined): UpstreamProxy | null {
  const text = value?.trim() ?? "";
  if (text === "") return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error("PLATFORM_PROXY_URL must be an http:// proxy URL (http://[user:password@]host:port)");
  }
  if (url.protocol !== "http:" || (url.pathname !== "/" && url.pathname !== "") || url.search || url.hash) {
    throw new Error("PLATFORM_PROXY_URL must be an http:// proxy URL (http://[user:password@]host:port); other schemes are not supported");
  }
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port === "" ? 80 : Number(url.port),
    authorization: user || password ? `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` : null,
    display: `http://${url.host}`,
  };
}

const MAX_ANSWER_HEAD_BYTES = 16 * 1024;

/**
 * A tunnel to address:port through the upstream proxy: resolves with the
 * socket once the proxy answered 2xx to CONNECT (any bytes after its answer
 * head are handed back), or rejects with what it answered.
 */
export function tunnelThrough(proxy: UpstreamProxy, address: string, port: number): Promise<{ socket: Socket; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: proxy.host, port: proxy.port });
    const authority = net.isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
    let head = Buffer.alloc(0);
    const fail = (message: string) => {
      socket.destroy();
      reject(new Error(message));
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_ANSWER_HEAD_BYTES) fail(`the platform proxy ${proxy.display} sent an answer head over 16 KiB`);
        return;
      }
      socket.off("data", onData);
      socket.off("error", onError);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString("latin1"))?.[1];
      if (!status || !status.startsWith("2")) {
        fail(`the platform proxy ${proxy.display} answered CONNECT with ${status ?? "no HTTP status"}`);
        return;
      }
      resolve({ socket, rest: head.subarray(end + 4) });
    };
    const onError = (error: Error) => fail(`the platform proxy ${proxy.display} could not be reached: ${error.message}`);
    socket.on("data", onData);
    socket.on("error", onError);
    socket.once("connect", () => {
      const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
      if (proxy.authorization) lines.push(`Proxy-Authorization: ${proxy.authorization}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    });
  });
}
