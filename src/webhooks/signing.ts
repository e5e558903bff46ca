/**
 * Standard Webhooks signatures: `v1,` + base64(HMAC-SHA256(key, "id.timestamp.body")),
 * several separated by spaces while a rotated secret still signs.
 */
import { bytesToBase64, secretKeyBytes } from "./secret.ts";

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

async function hmacSha256(key: Uint8Array, content: string): Promise<Uint8Array> {
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, new TextEncoder().encode(content)));
}

/** One `v1,<base64>` signature of the message with the secret. */
export async function signature(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  const mac = await hmacSha256(secretKeyBytes(secret), `${id}.${timestampSeconds}.${body}`);
  return `v1,${bytesToBase64(mac)}`;
}

/** The three headers for a message, signed with every secret given (current first). */
export async function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<SignedHeaders> {
  const signatures = await Promise.all(secrets.map((secret) => signature(secret, id, timestampSeconds, body)));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signatures.join(" "),
  };
}
