/**
 * A TCP proxy in front of the Worker that, while armed, stops forwarding a
 * request once a given number of bytes has passed: the upload hangs there,
 * as on a connection that went dead, until the client gives up or is killed
 * (then both sides are closed). Disarmed, it forwards everything; the URL
 * stays the same, so a client that keys its state by URL sees one server.
 */
import { startTcpProxy } from "./tcp-proxy.ts";

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
  let forwarded = 0;
  let armed = true;
  let onStall: () => void = () => undefined;
  const stalled = new Promise<void>((resolve) => (onStall = resolve));
  const proxy = await startTcpProxy(target, (chunk, { forward, hold }) => {
    if (armed && forwarded + chunk.length > stallAfterBytes) {
      const part = chunk.subarray(0, Math.max(0, stallAfterBytes - forwarded));
      forwarded += part.length;
      forward(part);
      hold();
      onStall();
      return;
    }
    forwarded += chunk.length;
    forward(chunk);
  });
  return {
    url: proxy.url,
    stalled,
    disarm: () => {
      armed = false;
    },
    forwarded: () => forwarded,
    close: proxy.close,
  };
}
