/**
 * The local stack's ports come from below the system's ephemeral range, so
 * that no outgoing connection can take one between its choice and the bind
 * (wrangler dev binds its port minutes later on a loaded machine).
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort, portInUse } from "../../scripts/local-stack/ports.ts";

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

describe("freePort", () => {
  it("gives distinct free ports below the ephemeral range that a server can then listen on", async () => {
    const ephemeral = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 10 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeral);
    }
    const server = await listen(ports[0]!);
    expect(await portInUse(ports[0]!)).toBe(true);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await portInUse(ports[0]!)).toBe(false);
  });
});
