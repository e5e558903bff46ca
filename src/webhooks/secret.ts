/**
 * Signing secrets in the Standard Webhooks format: `whsec_` + base64 of the
 * key bytes. Receivers (and any verifier library) decode the part after the
 * prefix to get the HMAC key.
 */

export const SECRET_PREFIX = "whsec_";
/** 32 bytes: above the specification's minimum of 24, and SHA-256's block-friendly size. */
const SECRET_BYTES = 32;

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function newSecret(): string {
  return SECRET_PREFIX + bytesToBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/** The HMAC key a secret stands for. */
export function secretKeyBytes(secret: string): Uint8Array {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return base64ToBytes(encoded);
}
