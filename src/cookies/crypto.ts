/**
 * Cookies files are sessions of the user's platform accounts: they are kept
 * only as AES-256-GCM ciphertext. The key is derived (HKDF-SHA-256) from the
 * Worker's COOKIES_KEY secret, which never leaves the Worker; the account and
 * platform are the associated data, so a ciphertext copied to another
 * account's row or platform does not decrypt.
 */
import { DomainError } from "../domain/errors.ts";
import type { Sealed } from "../db/platform-cookies.ts";

const MIN_SECRET_LENGTH = 32;

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function unbase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The AES key, or an DomainError when the operator has not set a usable COOKIES_KEY. */
async function cookiesKey(env: Pick<Env, "COOKIES_KEY">): Promise<CryptoKey> {
  const secret = env.COOKIES_KEY ?? "";
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new DomainError("service_unavailable", "Storing platform cookies is not set up on this service (the operator has not set COOKIES_KEY).");
  }
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode("clipjobs platform cookies v1") },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

function associatedData(accountId: string, platform: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(new TextEncoder().encode(`${accountId}\n${platform}`));
}

export type { Sealed };

export async function sealCookies(env: Pick<Env, "COOKIES_KEY">, accountId: string, platform: string, text: string): Promise<Sealed> {
  const key = await cookiesKey(env);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plain = new Uint8Array(new TextEncoder().encode(text));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: associatedData(accountId, platform) }, key, plain);
  return { iv: base64(iv), ciphertext: base64(new Uint8Array(sealed)) };
}

/** The file, or null when it does not decrypt (another key, another account's row). */
export async function openCookies(env: Pick<Env, "COOKIES_KEY">, accountId: string, platform: string, sealed: Sealed): Promise<string | null> {
  const key = await cookiesKey(env);
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: unbase64(sealed.iv), additionalData: associatedData(accountId, platform) },
      key,
      unbase64(sealed.ciphertext),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}
