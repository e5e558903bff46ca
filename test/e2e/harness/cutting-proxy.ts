/**
 * A TCP proxy in front of the Worker that cuts every open connection once,
 * after a given number of request bytes have passed: a dropped connection in
 * the middle of an upload, as a flaky network would cause it.
 */
import { startTcpProxy } from "./tcp-proxy.ts";

export interface CuttingProxy {
  url: string;
  /** Bytes forwarded client -> Worker so far. */
  forwarded(): number;
  /** Whether the cut happened. */
  didCut(): boolean;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string, cutAfterBytes: number): Promise<CuttingProxy> {
  let forwarded = 0;
  let cut = false;
  const proxy = await startTcpProxy(target, (chunk, { forward, cutAll }) => {
    forwarded += chunk.length;
    if (!cut && forwarded > cutAfterBytes) {
      cut = true;
      cutAll();
      return;
    }
    forward(chunk);
  });
  return { url: proxy.url, forwarded: () => forwarded, didCut: () => cut, close: proxy.close };
}
