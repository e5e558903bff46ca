/**
 * A loopback file host that sends a file no faster than a given rate (bytes
 * per second, counted from the start of the response): a source on the
 * internet arriving at, say, twice its playback speed. Paced by the clock,
 * not by the reader: a reader that keeps up gets the file in size / rate
 * seconds.
 */
import { open } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";

const CHUNK = 256 * 1024;

export interface ThrottledServer {
  /** Serves `path` at `bytesPerSecond` under the returned URL. */
  add(name: string, path: string, bytesPerSecond: number): string;
  close(): Promise<void>;
}

export async function startThrottledServer(): Promise<ThrottledServer> {
  const files = new Map<string, { path: string; rate: number }>();
  const server = http.createServer((req, res) => {
    const entry = files.get((req.url ?? "/").slice(1));
    if (!entry || req.method !== "GET") return void res.writeHead(404).end();
    void (async () => {
      const file = await open(entry.path, "r");
      try {
        const size = (await file.stat()).size;
        res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
        const started = performance.now();
        const buffer = Buffer.alloc(CHUNK);
        for (let sent = 0; sent < size && !res.destroyed; ) {
          // Not before this chunk's time at the rate.
          const due = started + (sent / entry.rate) * 1000;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          const { bytesRead } = await file.read(buffer, 0, Math.min(CHUNK, size - sent), sent);
          sent += bytesRead;
          if (!res.write(Buffer.from(buffer.subarray(0, bytesRead)))) await new Promise((resolve) => res.once("drain", resolve));
        }
        res.end();
      } catch {
        res.destroy();
      } finally {
        await file.close();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    add(name, path, bytesPerSecond) {
      files.set(name, { path, rate: bytesPerSecond });
      return `${origin}/${name}`;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
