import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { JobFailure, errorMessage } from "../shared/errors.ts";
import type { AddressPolicy, Resolver } from "./address-policy.ts";
import { sourceWriteStream } from "./write-stream.ts";

/**
 * Downloads a direct video link to disk under the rules of SPEC section 7:
 * http/https only, no credentials, every address checked before connecting
 * and the connection pinned to the checked address (no DNS rebinding), every
 * redirect hop checked again, bytes capped whatever Content-Length claims,
 * a total time limit and a stall limit, and nothing held in memory.
 */
export interface SafeDownloadRequest {
  url: string;
  destPath: string;
  maxBytes: number;
  /** Message used when maxBytes is passed (which limit it was). */
  tooLargeMessage: string;
  timeoutMs: number;
  stallTimeoutMs: number;
  maxRedirects: number;
  policy: AddressPolicy;
  resolver: Resolver;
  signal: AbortSignal;
  onProgress?: (bytes: number, totalBytes: number | null) => void;
}

export interface SafeDownloadResult {
  finalUrl: string;
  bytes: number;
  contentType: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = "clipjobs-engine/0.1 (+video clip service)";

/** Checks a URL's form: scheme and credentials. */
export function checkUrlForm(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new JobFailure("source_unreachable", "The video URL is not a valid URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new JobFailure("source_unreachable", `Only http and https video URLs are accepted, not ${url.protocol.replace(":", "")}.`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new JobFailure("source_unreachable", "Video URLs with credentials (user:password@) are not accepted.");
  }
  return url;
}

function bareHostname(url: URL): string {
  // WHATWG keeps IPv6 literals bracketed in hostname.
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

function portOf(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** Resolves the URL's host and applies the policy to every address it has (also the egress proxy's check). */
export async function checkedAddress(url: URL, policy: AddressPolicy, resolver: Resolver): Promise<{ address: string; family: 4 | 6 }> {
  const hostname = bareHostname(url);
  const literal = isIP(hostname);
  let addresses: { address: string; family: 4 | 6 }[];
  if (literal !== 0) {
    addresses = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolver(hostname);
    } catch (error) {
      throw new JobFailure("source_unreachable", `The video host ${hostname} could not be found (DNS lookup failed).`, { cause: error });
    }
    if (addresses.length === 0) throw new JobFailure("source_unreachable", `The video host ${hostname} has no addresses.`);
  }
  const port = portOf(url);
  // Every answer must pass: an attacker's name could mix a public and a private address.
  for (const candidate of addresses) {
    const refusal = policy({ hostname, address: candidate.address, port });
    if (refusal) {
      throw new JobFailure(
        "source_unreachable",
        `The video URL points to a private, loopback or otherwise non-public address, which is not allowed: ${refusal}.`,
      );
    }
  }
  const first = addresses[0];
  if (!first) throw new JobFailure("source_unreachable", `The video host ${hostname} has no addresses.`);
  return first;
}

/** A lookup that always answers the already-checked address. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

interface OpenResponse {
  response: http.IncomingMessage;
  url: URL;
}

/** Sends one GET to the pinned address; the caller handles the response. */
function request(url: URL, pinned: { address: string; family: 4 | 6 }, signal: AbortSignal): Promise<OpenResponse> {
  const hostname = bareHostname(url);
  const options: https.RequestOptions = {
    protocol: url.protocol,
    hostname,
    port: portOf(url),
    path: `${url.pathname}${url.search}`,
    method: "GET",
    headers: { host: url.host, "user-agent": USER_AGENT, accept: "*/*", "accept-encoding": "identity" },
    lookup: pinnedLookup(pinned.address, pinned.family),
    signal,
    agent: false,
  };
  if (url.protocol === "https:" && isIP(hostname) === 0) options.servername = hostname;
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(options, (response) => resolve({ response, url }));
    req.on("error", reject);
    req.end();
  });
}

function describeNetworkError(error: unknown, url: URL): string {
  const code = (error as { code?: unknown }).code;
  const host = url.host;
  if (code === "ECONNREFUSED") return `The video host ${host} refused the connection.`;
  if (code === "ECONNRESET") return `The video host ${host} closed the connection.`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `The video host ${host} could not be found.`;
  if (typeof code === "string" && code.startsWith("ERR_TLS") || code === "CERT_HAS_EXPIRED" || code === "DEPTH_ZERO_SELF_SIGNED_CERT") {
    return `The video host ${host} has an invalid TLS certificate.`;
  }
  return `The video could not be downloaded from ${host}: ${errorMessage(error)}.`;
}

export async function safeDownload(req: SafeDownloadRequest): Promise<SafeDownloadResult> {
  const local = new AbortController();
  let stopReason: JobFailure | undefined;
  const stop = (failure: JobFailure) => {
    if (!stopReason) stopReason = failure;
    local.abort(failure);
  };
  const onOuterAbort = () => local.abort(req.signal.reason);
  if (req.signal.aborted) throw req.signal.reason;
  req.signal.addEventListener("abort", onOuterAbort, { once: true });
  const seconds = (ms: number) => Math.round(ms / 1000);
  const totalTimer = setTimeout(
    () => stop(new JobFailure("source_unreachable", `The video download took longer than the ${seconds(req.timeoutMs)} s limit.`)),
    req.timeoutMs,
  );
  let stallTimer: NodeJS.Timeout | undefined;
  const armStall = () => {
    if (stallTimer) clearTimeout(stallTimer);
    stallTimer = setTimeout(
      () => stop(new JobFailure("source_unreachable", `The video host stopped sending data for ${seconds(req.stallTimeoutMs)} s.`)),
      req.stallTimeoutMs,
    );
  };

  // Whatever went wrong, an abort we caused explains it better than the socket error.
  const explain = (error: unknown, url: URL): unknown => {
    if (req.signal.aborted) return req.signal.reason;
    if (stopReason) return stopReason;
    if (error instanceof JobFailure) return error;
    return new JobFailure("source_unreachable", describeNetworkError(error, url), { cause: error });
  };

  let url = checkUrlForm(req.url);
  try {
    for (let hop = 0; ; hop += 1) {
      const pinned = await checkedAddress(url, req.policy, req.resolver);
      armStall();
      let opened: OpenResponse;
      try {
        opened = await request(url, pinned, local.signal);
      } catch (error) {
        throw explain(error, url);
      }
      const { response } = opened;
      const status = response.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status)) {
        // Never read a redirect's body: a hostile host can make it endless. Closing
        // the socket (agent: false, so it is this request's own) frees it at once.
        response.destroy();
        const location = response.headers.location;
        if (!location) throw new JobFailure("source_unreachable", `The video host answered a redirect (HTTP ${status}) without a target.`);
        if (hop >= req.maxRedirects) throw new JobFailure("source_unreachable", `The video URL redirected more than ${req.maxRedirects} times.`);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new JobFailure("source_unreachable", "The video host redirected to an invalid URL.");
        }
        url = checkUrlForm(next.href);
        continue;
      }
      if (status < 200 || status >= 300) {
        response.destroy();
        throw new JobFailure("source_unreachable", `The video host answered HTTP ${status} for the video URL.`);
      }
      const contentType = String(response.headers["content-type"] ?? "").toLowerCase();
      if (contentType.startsWith("text/html") || contentType.startsWith("application/xhtml")) {
        response.destroy();
        throw new JobFailure("source_not_video", "The URL returned a web page (HTML), not a video file. Link to the video file itself or to a supported platform.");
      }
      const declared = Number(response.headers["content-length"]);
      const totalBytes = Number.isFinite(declared) && declared >= 0 ? declared : null;
      if (totalBytes !== null && totalBytes > req.maxBytes) {
        response.destroy();
        throw new JobFailure("source_too_large", req.tooLargeMessage);
      }
      let bytes = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          bytes += chunk.length;
          armStall();
          if (bytes > req.maxBytes) {
            stop(new JobFailure("source_too_large", req.tooLargeMessage));
            callback();
            return;
          }
          req.onProgress?.(bytes, totalBytes);
          callback(null, chunk);
        },
      });
      try {
        await pipeline(response, counter, sourceWriteStream(req.destPath), { signal: local.signal });
      } catch (error) {
        throw explain(error, url);
      }
      if (stopReason) throw stopReason;
      if (totalBytes !== null && bytes < totalBytes) {
        throw new JobFailure("source_unreachable", "The video download ended early (the connection closed before the whole file arrived).");
      }
      return { finalUrl: url.href, bytes, contentType };
    }
  } finally {
    // Whatever path left the loop, no request of this download may keep its socket.
    if (!local.signal.aborted) local.abort(new Error("download finished"));
    clearTimeout(totalTimer);
    if (stallTimer) clearTimeout(stallTimer);
    req.signal.removeEventListener("abort", onOuterAbort);
  }
}
