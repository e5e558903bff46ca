/**
 * A TCP proxy in front of the Worker for network faults in the middle of a
 * request: every byte from the client goes through `onClientData`, which
 * forwards it, or cuts every open connection, or holds the rest of the
 * request. The proxies the suites use are built on it (cutting-proxy.ts,
 * stalling-proxy.ts).
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export interface ProxyControls {
  /** Sends these bytes on to the Worker. */
  forward(chunk: Buffer): void;
  /** Closes every open connection, both sides. */
  cutAll(): void;
  /** Forwards nothing more from this connection (it hangs until a side closes). */
  hold(): void;
  /**
   * Reads nothing more from this connection until the returned function is
   * called: the client's bytes wait in its socket (nothing is lost), and the
   * resume forwards them as they come again.
   */
  pause(): () => void;
}

export interface TcpProxy {
  url: string;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string, onClientData: (chunk: Buffer, controls: ProxyControls) => void): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let held = false;
    let paused = false;
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    const controls: ProxyControls = {
      forward: (chunk) => {
        if (!upstream.write(chunk)) client.pause();
      },
      cutAll: () => {
        for (const socket of [...sockets]) socket.destroy();
        sockets.clear();
      },
      hold: () => {
        held = true;
      },
      pause: () => {
        paused = true;
        client.pause();
        return () => {
          paused = false;
          if (!client.destroyed) client.resume();
        };
      },
    };
    client.on("data", (chunk: Buffer) => {
      if (!held) onClientData(chunk, controls);
    });
    upstream.on("drain", () => paused || client.resume());
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
