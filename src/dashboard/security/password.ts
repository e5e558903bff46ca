/**
 * Password hashing with WebCrypto PBKDF2-SHA256, the slow KDF the Workers
 * runtime offers. Stored as "pbkdf2-sha256$<iterations>$<salt>$<hash>"
 * (base64), so the parameters travel with each hash and can be raised later:
 * a hash made with fewer iterations is re-made at the next sign-in.
 */
import { timingSafeEqualText } from "../../keys/api-key.ts";

export const PASSWORD_ALGORITHM = "pbkdf2-sha256";
/**
 * Production Workers refuse PBKDF2 above 100,000 iterations ("iteration counts
 * above 100000 are not supported"); the open-source workerd behind wrangler dev
 * and miniflare has no such cap, so this limit cannot be probed locally.
 */
export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;

export const MIN_PASSWORD_LENGTH = 10;
/** Bounds the work one sign-in can ask of the KDF. */
export const MAX_PASSWORD_LENGTH = 256;

export interface PasswordHash {
  algorithm: string;
  iterations: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
}

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  // NFC: the same password typed on two keyboards gives the same bytes.
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(password.normalize("NFC")), "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, material, HASH_BITS);
  return new Uint8Array(bits);
}

export function formatPasswordHash(parts: PasswordHash): string {
  return [parts.algorithm, String(parts.iterations), toBase64(parts.salt), toBase64(parts.hash)].join("$");
}

export function parsePasswordHash(stored: string): PasswordHash | null {
  const [algorithm, iterationsText, saltText, hashText, ...rest] = stored.split("$");
  if (rest.length > 0 || algorithm !== PASSWORD_ALGORITHM || !iterationsText || !saltText || !hashText) return null;
  const iterations = Number(iterationsText);
  const salt = fromBase64(saltText);
  const hash = fromBase64(hashText);
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > PBKDF2_ITERATIONS || !salt || !hash) return null;
  return { algorithm, iterations, salt, hash };
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return formatPasswordHash({ algorithm: PASSWORD_ALGORITHM, iterations: PBKDF2_ITERATIONS, salt, hash });
}

export interface PasswordCheck {
  ok: boolean;
  /** The stored hash uses weaker parameters than today's: store a new one. */
  needsRehash: boolean;
}

export async function verifyPassword(password: string, stored: string): Promise<PasswordCheck> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return { ok: false, needsRehash: false };
  const candidate = await derive(password, parsed.salt, parsed.iterations);
  const ok = timingSafeEqualText(toBase64(candidate), toBase64(parsed.hash));
  return { ok, needsRehash: ok && parsed.iterations < PBKDF2_ITERATIONS };
}

let decoy: Promise<string> | undefined;

/**
 * Spends the same KDF work as a real check, for sign-ins naming an unknown
 * address or an account without a password, so timing does not tell them apart.
 */
export async function verifyAgainstDecoy(password: string): Promise<void> {
  decoy ??= hashPassword(crypto.randomUUID());
  await verifyPassword(password, await decoy);
}
