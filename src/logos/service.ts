/**
 * An account's logo, shared by the API (/api/v1/logo), the
 * dashboard's logo page and the engine channel's logo route.
 *
 * The image lives in the private bucket (src/jobs/storage.ts), never in the
 * bucket served on {cdn_url}: `logos/{account_id}/{sha256}-{write id}`. Each
 * write has a key of its own, even for the same image: a replacement is
 * written under its key, the record moves to it (one D1 batch that also
 * answers which key it replaced), and only that replaced key is deleted. No
 * later write can name a key again, so two concurrent PUTs (one of them
 * putting back the image the other replaces) never leave the record naming
 * a deleted object. A job reading the logo meanwhile gets one whole image.
 */
import { MAX_LOGO_BYTES, type LogoContentType } from "#contract";
import { deleteLogo, findLogo, putLogo, type Logo } from "../db/logos.ts";
import { DomainError } from "../domain/errors.ts";
import { privateBucket } from "../jobs/storage.ts";
import { checkLogoImage } from "./image.ts";

/** Where one write of a logo lives: its content's hash, then a random id of the write (no two writes share a key). */
export function logoKey(accountId: string, sha256: string): string {
  const id = [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `logos/${accountId}/${sha256}-${id}`;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function logoTooLarge(): DomainError {
  return new DomainError("logo_too_large", `The logo is larger than ${MAX_LOGO_BYTES} bytes (1 MiB).`);
}

/** Checks and stores the account's logo, replacing any earlier one. */
export async function storeLogo(env: Env, accountId: string, bytes: Uint8Array): Promise<{ created: boolean; logo: Logo }> {
  if (bytes.byteLength > MAX_LOGO_BYTES) throw logoTooLarge();
  if (bytes.byteLength === 0) throw new DomainError("invalid_logo", "The logo is empty: send the image's bytes as the body.");
  const check = await checkLogoImage(bytes);
  if (!check.ok) throw new DomainError("invalid_logo", check.problem);
  const sha256 = await sha256Hex(bytes);
  const objectKey = logoKey(accountId, sha256);
  await privateBucket(env).put(objectKey, bytes, { httpMetadata: { contentType: check.contentType }, customMetadata: { account_id: accountId } });
  const { created, logo, previousKey } = await putLogo(env.DB, {
    accountId,
    objectKey,
    contentType: check.contentType,
    width: check.width,
    height: check.height,
    sizeBytes: bytes.byteLength,
    sha256,
  });
  if (previousKey !== null && previousKey !== objectKey) await privateBucket(env).delete(previousKey);
  return { created, logo };
}

/** Deletes the account's logo; false when it had none. */
export async function removeLogo(env: Env, accountId: string): Promise<boolean> {
  const deleted = await deleteLogo(env.DB, accountId);
  if (!deleted) return false;
  await privateBucket(env).delete(deleted.objectKey);
  return true;
}

/** The logo's bytes and record, or null when the account has none. */
export async function readLogo(env: Env, accountId: string): Promise<{ logo: Logo; body: ReadableStream; contentType: LogoContentType } | null> {
  // A replacement may delete the object between the record read and the get: the record then names the new one.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const logo = await findLogo(env.DB, accountId);
    if (!logo) return null;
    const object = await privateBucket(env).get(logo.objectKey);
    if (object) return { logo, body: object.body, contentType: logo.contentType };
  }
  return null;
}

export function logoToJson(logo: Logo) {
  return {
    content_type: logo.contentType,
    width: logo.width,
    height: logo.height,
    size_bytes: logo.sizeBytes,
    sha256: logo.sha256,
    created_at: logo.createdAt,
    updated_at: logo.updatedAt,
  };
}
