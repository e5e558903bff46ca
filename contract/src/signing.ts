/**
 * Signed requests, Worker -> engine (StartJob, cancel), with Ed25519
 * (WebCrypto, in workerd and in Node alike). The Worker alone holds the
 * private key (ENGINE_SIGNING_KEY, a secret); the engine gets only the public
 * key (ENGINE_VERIFY_KEY), which verifies a signature but cannot make one, so
 * an engine, or whatever runs code inside one, can never forge a request.
 *
 * A signature covers a timestamp, a random nonce, the method, the path and
 * the body. The engine accepts it only while fresh (ENGINE_SIGNATURE_TOLERANCE_SECONDS)
 * and only once: it remembers the nonces it accepted for as long as they
 * could be fresh, so a replayed StartJob or cancel is refused.
 *
 * Key formats (both fit an environment variable or a secret):
 * - ENGINE_SIGNING_KEY: the private key as PKCS#8 DER in base64 (what
 *   `openssl genpkey -algorithm ed25519 -outform DER | base64 -w0` prints;
 *   PEM armour and whitespace are tolerated);
 * - ENGINE_VERIFY_KEY: the 32-byte public key in base64url (a JWK's `x`),
 *   derived from the signing key by `verifyKeyFor`.
 */
export const ENGINE_SIGNATURE_HEADER = "Engine-Signature";
/** A signature older or newer than this is refused (clock skew, transit, a Container's cold start). */
export const ENGINE_SIGNATURE_TOLERANCE_SECONDS = 300;

const ED25519 = { name: "Ed25519" } as const;
/** PKCS#8 DER of an Ed25519 private key: this 16-byte header, then the 32-byte seed. */
const PKCS8_ED25519_HEADER = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
const utf8 = new TextEncoder();

export function toBase64Url(bytes: ArrayBuffer | Uint8Array): string {
  let text = "";
  for (const byte of bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Standard or URL-safe base64, padded or not; null when it is not base64. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  const clean = text.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/]*$/.test(clean) || clean.length % 4 === 1) return null;
  try {
    const binary = atob(clean + "=".repeat((4 - (clean.length % 4)) % 4));
    const bytes = new Uint8Array(new ArrayBuffer(binary.length));
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

function signingKeyBytes(text: string | undefined): Uint8Array<ArrayBuffer> | null {
  const body = (text ?? "").replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "").replace(/\s+/g, "");
  const bytes = body === "" ? null : fromBase64(body);
  if (!bytes || bytes.length !== 48 || PKCS8_ED25519_HEADER.some((b, i) => bytes[i] !== b)) return null;
  return bytes as Uint8Array<ArrayBuffer>;
}

/** Why ENGINE_SIGNING_KEY is unusable, or null when it is an Ed25519 private key. */
export function signingKeyProblem(text: string | undefined): string | null {
  if (!text) return "ENGINE_SIGNING_KEY is not set";
  if (!signingKeyBytes(text)) {
    return "ENGINE_SIGNING_KEY must be an Ed25519 private key, PKCS#8 DER in base64 (openssl genpkey -algorithm ed25519 -outform DER | base64 -w0)";
  }
  return null;
}

/** Why ENGINE_VERIFY_KEY is unusable, or null when it is a 32-byte Ed25519 public key. */
export function verifyKeyProblem(text: string | undefined): string | null {
  if (!text) return "ENGINE_VERIFY_KEY is not set";
  if (fromBase64(text.trim())?.length !== 32) return "ENGINE_VERIFY_KEY must be a 32-byte Ed25519 public key in base64url";
  return null;
}

export async function importSigningKey(text: string): Promise<CryptoKey> {
  const bytes = signingKeyBytes(text);
  if (!bytes) throw new Error(signingKeyProblem(text) ?? "bad signing key");
  return crypto.subtle.importKey("pkcs8", bytes, ED25519, true, ["sign"]);
}

export async function importVerifyKey(text: string): Promise<CryptoKey> {
  const bytes = fromBase64(text.trim());
  if (!bytes || bytes.length !== 32) throw new Error(verifyKeyProblem(text) ?? "bad verify key");
  return crypto.subtle.importKey("raw", bytes, ED25519, false, ["verify"]);
}

/** The public key (ENGINE_VERIFY_KEY) of a signing key. */
export async function verifyKeyFor(signingKeyText: string): Promise<string> {
  const jwk = (await crypto.subtle.exportKey("jwk", await importSigningKey(signingKeyText))) as JsonWebKey;
  if (!jwk.x) throw new Error("the signing key exported no public part");
  return jwk.x;
}

function signedText(timestamp: number, nonce: string, method: string, path: string, body: string): Uint8Array<ArrayBuffer> {
  return utf8.encode(`${timestamp}.${nonce}.${method.toUpperCase()}.${path}.${body}`) as Uint8Array<ArrayBuffer>;
}

/** The ENGINE_SIGNATURE_HEADER value for a request: `t=<unix seconds>,n=<nonce>,v1=<base64url Ed25519 signature>`. */
export async function signEngineRequest(
  key: CryptoKey,
  request: { method: string; path: string; body: string },
  nowMs: number = Date.now(),
): Promise<string> {
  const timestamp = Math.floor(nowMs / 1000);
  const nonce = toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  const signature = await crypto.subtle.sign(ED25519, key, signedText(timestamp, nonce, request.method, request.path, request.body));
  return `t=${timestamp},n=${nonce},v1=${toBase64Url(signature)}`;
}

export type VerifiedRequest = { ok: true; timestamp: number; nonce: string } | { ok: false; reason: string };

/**
 * Checks a fresh signature of exactly this method, path and body. Whether its
 * nonce was seen before is the caller's to check (the engine's ledger).
 */
export async function verifyEngineRequest(
  key: CryptoKey,
  header: string | null | undefined,
  request: { method: string; path: string; body: string },
  nowMs: number = Date.now(),
): Promise<VerifiedRequest> {
  const match = /^t=(\d{1,12}),n=([A-Za-z0-9_-]{16,64}),v1=([A-Za-z0-9_-]{1,200})$/.exec(header ?? "");
  if (!match) return { ok: false, reason: "no signature" };
  const timestamp = Number(match[1]);
  if (Math.abs(nowMs / 1000 - timestamp) > ENGINE_SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: "stale signature" };
  const nonce = match[2]!;
  const signature = fromBase64(match[3]!);
  if (!signature) return { ok: false, reason: "malformed signature" };
  const valid = await crypto.subtle.verify(ED25519, key, signature, signedText(timestamp, nonce, request.method, request.path, request.body));
  return valid ? { ok: true, timestamp, nonce } : { ok: false, reason: "bad signature" };
}
