import { randomBase62 } from "../lib/random.ts";

/** Every key starts with this, so leaked keys are recognisable by secret scanners. */
export const API_KEY_PREFIX = "ck_live_";
const KEY_RANDOM_BYTES = 32;
/** Characters of the key shown back to its owner, e.g. "ck_live_4fZq". */
const VISIBLE_PREFIX_LENGTH = API_KEY_PREFIX.length + 4;
const API_KEY_SHAPE = /^ck_live_[0-9A-Za-z]{40,64}$/;

export interface GeneratedApiKey {
  /** Shown once to the caller, never stored. */
  secret: string;
  hash: string;
  prefix: string;
  last4: string;
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function generateApiKey(): Promise<GeneratedApiKey> {
  const secret = API_KEY_PREFIX + randomBase62(KEY_RANDOM_BYTES);
  return {
    secret,
    hash: await sha256Hex(secret),
    prefix: secret.slice(0, VISIBLE_PREFIX_LENGTH),
    last4: secret.slice(-4),
  };
}

/** Cheap shape check before any lookup: garbage never reaches the database. */
export function looksLikeApiKey(candidate: string): boolean {
  return API_KEY_SHAPE.test(candidate);
}

/** Constant-time equality of two strings of hex (or any ASCII). */
export function timingSafeEqualText(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  if (left.byteLength !== right.byteLength) {
    // Still spend the comparison so the length check alone is the only shortcut.
    crypto.subtle.timingSafeEqual(left, left);
    return false;
  }
  return crypto.subtle.timingSafeEqual(left, right);
}
