/**
 * The engine channel's keys for a local stack, a bench or `.dev.vars`
 * (docs/architecture.md "Engine credentials"): an Ed25519 key pair whose private half the
 * Worker signs StartJob and cancel with (ENGINE_SIGNING_KEY: PKCS#8 DER,
 * base64) and whose public half the engine verifies with (ENGINE_VERIFY_KEY:
 * 32 bytes, base64url), and the Worker's own secret for callback tokens.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from "node:crypto";

export interface EngineKeys {
  /** Worker only. */
  ENGINE_SIGNING_KEY: string;
  /** Worker only. */
  CALLBACK_TOKEN_SECRET: string;
  /** The engine's: verifies, cannot sign. */
  ENGINE_VERIFY_KEY: string;
}

export function newSigningKey(): string {
  const { privateKey } = generateKeyPairSync("ed25519");
  return privateKey.export({ format: "der", type: "pkcs8" }).toString("base64");
}

export function newCallbackTokenSecret(): string {
  return `local-${randomBytes(32).toString("base64url")}`;
}

/** The public half of a signing key, as ENGINE_VERIFY_KEY. */
export function verifyKeyOf(signingKey: string): string {
  const privateKey = createPrivateKey({ key: Buffer.from(signingKey, "base64"), format: "der", type: "pkcs8" });
  const jwk = createPublicKey(privateKey).export({ format: "jwk" });
  if (!jwk.x) throw new Error("ENGINE_SIGNING_KEY has no Ed25519 public part");
  return jwk.x;
}

export function newEngineKeys(): EngineKeys {
  const signingKey = newSigningKey();
  return { ENGINE_SIGNING_KEY: signingKey, CALLBACK_TOKEN_SECRET: newCallbackTokenSecret(), ENGINE_VERIFY_KEY: verifyKeyOf(signingKey) };
}
