/**
 * A TCP proxy in front of the Worker that cuts every open connection once,
 * after a given number of request bytes have passed: a dropped connection in
 * the middle of an upload, as a flaky network would cause it.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export interface CuttingProxy {
  url: string;
  /** Bytes forwarded client -> Worker so far. */
  forwarded(): number;
  /** Whether the cut happened. */
  didCut(): boolean;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string, cutAfterBytes: number): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let forwarded = 0;
  let cut = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("data", (chunk: Buffer) => {
      forwarded += chunk.length;
      if (!cut && forwarded > cutAfterBytes) {
        cut = true;
        for (const socket of [...sockets]) socket.destroy();
        sockets.clear();
        return;
      }
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
    forwarded: () => forwarded,
    didCut: () => cut,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
