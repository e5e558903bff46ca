/**
 * Per-job callback tokens: `<payload>.<signature>`, both base64url, where the
 * payload is JSON {job_id, exp, scopes} and the signature is HMAC-SHA256 over
 * the encoded payload with CALLBACK_TOKEN_SECRET, a secret only the Worker
 * holds (never an engine: the engine receives its job's token in StartJob and
 * cannot make another). A token names exactly one job, expires, and opens only
 * the channel routes of its scopes (scopes.ts). Nothing else (API keys, the
 * admin token) has this shape.
 */
import { decodeBase64Url, encodeBase64Url } from "hono/utils/encode";
import { isScope, type Scope } from "./scopes.ts";

export interface TokenClaims {
  job_id: string;
  /** Unix seconds. */
  exp: number;
  scopes: Scope[];
  /** A clip edit's token (docs/editing.md): it opens that edit's routes of the job, never the job's own. */
  edit_id?: string;
}

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    keys.set(secret, key);
  }
  return key;
}

export async function signEngineToken(
  secret: string,
  jobId: string,
  scopes: readonly Scope[],
  ttlSeconds: number,
  nowMs: number = Date.now(),
  editId?: string,
): Promise<string> {
  const claims: TokenClaims = { job_id: jobId, exp: Math.floor(nowMs / 1000) + ttlSeconds, scopes: [...scopes], ...(editId ? { edit_id: editId } : {}) };
  const encoded = encodeBase64Url(encoder.encode(JSON.stringify(claims)).buffer);
  const signature = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(encoded));
  return `${encoded}.${encodeBase64Url(signature)}`;
}

function parseClaims(encoded: string): TokenClaims | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(decodeBase64Url(encoded)));
    if (typeof value !== "object" || value === null) return null;
    const { job_id, exp, scopes, edit_id } = value as Record<string, unknown>;
    if (typeof job_id !== "string" || typeof exp !== "number" || !Array.isArray(scopes)) return null;
    if (edit_id !== undefined && typeof edit_id !== "string") return null;
    if (!scopes.every((scope): scope is Scope => typeof scope === "string" && isScope(scope))) return null;
    return { job_id, exp, scopes, ...(edit_id !== undefined ? { edit_id } : {}) };
  } catch {
    return null;
  }
}

/**
 * The token's claims when it is signed with `secret`, unexpired, for `jobId`
 * and carries `scope`; else null. crypto.subtle.verify compares the
 * signature in constant time.
 */
export async function verifyEngineToken(
  secret: string,
  token: string,
  jobId: string,
  scope: Scope,
  nowMs: number = Date.now(),
): Promise<TokenClaims | null> {
  const parts = token.split(".");
  if (parts.length !== 2) return null;
  const [encoded, signatureText] = parts as [string, string];
  let signature: Uint8Array;
  try {
    signature = decodeBase64Url(signatureText);
  } catch {
    return null;
  }
  if (!(await crypto.subtle.verify("HMAC", await hmacKey(secret), signature, encoder.encode(encoded)))) return null;
  const claims = parseClaims(encoded);
  if (!claims || claims.job_id !== jobId || claims.exp <= Math.floor(nowMs / 1000) || !claims.scopes.includes(scope)) return null;
  return claims;
}
