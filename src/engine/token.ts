/**
 * Per-job engine tokens: `<payload>.<signature>`, both base64url, where the
 * payload is JSON {job_id, exp} and the signature is HMAC-SHA256 over the
 * encoded payload with ENGINE_SECRET. A token names exactly one job and
 * expires; nothing else (API keys, the admin token) has this shape.
 */
import { decodeBase64Url, encodeBase64Url } from "hono/utils/encode";

interface TokenPayload {
  job_id: string;
  exp: number;
}

const encoder = new TextEncoder();

async function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

export async function signEngineToken(
  secret: string,
  jobId: string,
  ttlSeconds: number,
  nowMs: number = Date.now(),
): Promise<string> {
  const payload: TokenPayload = { job_id: jobId, exp: Math.floor(nowMs / 1000) + ttlSeconds };
  const encoded = encodeBase64Url(encoder.encode(JSON.stringify(payload)).buffer);
  const signature = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(encoded));
  return `${encoded}.${encodeBase64Url(signature)}`;
}

function parsePayload(encoded: string): TokenPayload | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(decodeBase64Url(encoded)));
    if (typeof value !== "object" || value === null) return null;
    const { job_id, exp } = value as Record<string, unknown>;
    if (typeof job_id !== "string" || typeof exp !== "number") return null;
    return { job_id, exp };
  } catch {
    return null;
  }
}

/**
 * True only for an unexpired token signed with `secret` for `jobId`.
 * crypto.subtle.verify compares the signature in constant time.
 */
export async function verifyEngineToken(
  secret: string,
  token: string,
  jobId: string,
  nowMs: number = Date.now(),
): Promise<boolean> {
  const parts = token.split(".");
  if (parts.length !== 2) return false;
  const [encoded, signatureText] = parts as [string, string];
  let signature: Uint8Array;
  try {
    signature = decodeBase64Url(signatureText);
  } catch {
    return false;
  }
  const valid = await crypto.subtle.verify("HMAC", await hmacKey(secret), signature, encoder.encode(encoded));
  if (!valid) return false;
  const payload = parsePayload(encoded);
  return payload !== null && payload.job_id === jobId && payload.exp > Math.floor(nowMs / 1000);
}
