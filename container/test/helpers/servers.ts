import http from "node:http";
import type { AddressInfo } from "node:net";

/** A real local HTTP server that records every connection and request it gets. */
export interface RecordingServer {
  port: number;
  url(path: string): string;
  /** TCP connections accepted (a refused-before-connect download leaves this at 0). */
  connections: number;
  requests: string[];
  close(): Promise<void>;
}

export async function startRecordingServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  host = "127.0.0.1",
): Promise<RecordingServer> {
  const state = { connections: 0, requests: [] as string[] };
  const server = http.createServer((req, res) => {
    state.requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  server.on("connection", () => {
    state.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? "127.0.0.1" : host;
  return {
    port,
    url: (path) => `http://${urlHost}:${port}${path}`,
    get connections() {
      return state.connections;
    },
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls until check() is true or the deadline passes (no fixed sleeps in tests). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
