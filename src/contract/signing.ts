/**
 * Signed requests, Worker -> engine (StartJob, cancel). Both sides hold
 * ENGINE_SECRET (the Worker as a secret, the engine in its environment); a
 * request is accepted only with a fresh signature over its method, path and body.
 */
export const ENGINE_SIGNATURE_HEADER = "Engine-Signature";
/** A signature older or newer than this is refused (clock skew plus transit). */
export const ENGINE_SIGNATURE_TOLERANCE_SECONDS = 300;
/** ENGINE_SECRET must have at least this many bytes, on both sides. */
export const MIN_ENGINE_SECRET_BYTES = 32;

const utf8 = new TextEncoder();

/** Why a secret is unusable, or null when it is fine. */
export function engineSecretProblem(secret: string | undefined): string | null {
  if (!secret) return "ENGINE_SECRET is not set";
  if (utf8.encode(secret).length < MIN_ENGINE_SECRET_BYTES) {
    return `ENGINE_SECRET must be at least ${MIN_ENGINE_SECRET_BYTES} bytes (e.g. openssl rand -base64 32)`;
  }
  return null;
}

function toBase64Url(bytes: ArrayBuffer): string {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return null;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
    const bytes = new Uint8Array(new ArrayBuffer(binary.length));
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

async function signatureKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", utf8.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

function signedText(timestamp: number, method: string, path: string, body: string): string {
  return `${timestamp}.${method.toUpperCase()}.${path}.${body}`;
}

/** The ENGINE_SIGNATURE_HEADER value for a request: `t=<unix seconds>,v1=<base64url HMAC-SHA256>`. */
export async function signEngineRequest(
  secret: string,
  request: { method: string; path: string; body: string },
  nowMs: number = Date.now(),
): Promise<string> {
  const timestamp = Math.floor(nowMs / 1000);
  const mac = await crypto.subtle.sign("HMAC", await signatureKey(secret), utf8.encode(signedText(timestamp, request.method, request.path, request.body)));
  return `t=${timestamp},v1=${toBase64Url(mac)}`;
}

/** True only for a fresh signature of exactly this method, path and body (compared in constant time by WebCrypto). */
export async function verifyEngineRequest(
  secret: string,
  header: string | null | undefined,
  request: { method: string; path: string; body: string },
  nowMs: number = Date.now(),
): Promise<boolean> {
  const match = /^t=(\d{1,12}),v1=([A-Za-z0-9_-]{1,200})$/.exec(header ?? "");
  if (!match) return false;
  const timestamp = Number(match[1]);
  if (Math.abs(nowMs / 1000 - timestamp) > ENGINE_SIGNATURE_TOLERANCE_SECONDS) return false;
  const mac = fromBase64Url(match[2] ?? "");
  if (!mac) return false;
  return crypto.subtle.verify("HMAC", await signatureKey(secret), mac, utf8.encode(signedText(timestamp, request.method, request.path, request.body)));
}
