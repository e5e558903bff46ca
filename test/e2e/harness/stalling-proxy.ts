/**
 * A TCP proxy in front of the Worker that, while armed, stops forwarding a
 * request once a given number of bytes has passed: the upload hangs there,
 * as on a connection that went dead, until the client gives up or is killed
 * (then both sides are closed). Disarmed, it forwards everything; the URL
 * stays the same, so a client that keys its state by URL sees one server.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export interface StallingProxy {
  url: string;
  /** Resolves once a request has been held at the limit. */
  stalled: Promise<void>;
  /** Forward everything from now on. */
  disarm(): void;
  /** Bytes forwarded client -> Worker so far. */
  forwarded(): number;
  close(): Promise<void>;
}

export async function startStallingProxy(target: string, stallAfterBytes: number): Promise<StallingProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let forwarded = 0;
  let armed = true;
  let onStall: () => void = () => undefined;
  const stalled = new Promise<void>((resolve) => (onStall = resolve));
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let held = false;
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("data", (chunk: Buffer) => {
      if (held) return;
      if (armed && forwarded + chunk.length > stallAfterBytes) {
        const part = chunk.subarray(0, Math.max(0, stallAfterBytes - forwarded));
        forwarded += part.length;
        upstream.write(part);
        held = true;
        onStall();
        return;
      }
      forwarded += chunk.length;
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on("drain", () => client.resume());
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    client.on("close", drop);
    upstream.on("close", drop);
    client.on("error", drop);
    upstream.on("error", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    stalled,
    disarm: () => {
      armed = false;
    },
    forwarded: () => forwarded,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
