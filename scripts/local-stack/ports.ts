import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * Ports are picked below the system's ephemeral range. A port is chosen some
 * time before the server that uses it binds it (wrangler dev binds its port
 * after the migrations, minutes later on a loaded machine), and a port from
 * the ephemeral range can be taken in between by any outgoing connection's
 * local end: wrangler dev then dies with "Address already in use". Outgoing
 * connections never take a port below the range.
 */
const LOWEST = 10_000;
/** Linux's default ephemeral range starts here; macOS's and Windows' start at 49152. */
const DEFAULT_EPHEMERAL_START = 32_768;
const TRIES = 50;

function ephemeralStart(): number {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > LOWEST + 1000 ? first : DEFAULT_EPHEMERAL_START;
  } catch {
    return DEFAULT_EPHEMERAL_START;
  }
}

function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(bound > 0 ? bound : null));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now: a random one
 * below the ephemeral range (see above), or, should none of TRIES be free,
 * one the OS picks.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralStart();
  for (let i = 0; i < TRIES; i++) {
    const port = await tryListen(LOWEST + Math.floor(Math.random() * (below - LOWEST)));
    if (port !== null) return port;
  }
  const any = await tryListen(0);
  if (any === null) throw new Error("no free port");
  return any;
}

/** True when something already accepts connections on 127.0.0.1:`port`. */
export function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(true));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(false)));
  });
}
