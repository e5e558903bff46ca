import { randomBase62 } from "../lib/random.ts";

/** A new upload id: `upl_` + 15 random bytes in base62 (unguessable, like job ids). */
export function newUploadId(): string {
  return `upl_${randomBase62(15)}`;
}

export function isUploadId(value: string): boolean {
  return /^upl_[A-Za-z0-9]{16,40}$/.test(value);
}

/** The finished upload's object in the UPLOADS bucket (the multipart upload completes into it). */
export function uploadKey(uploadId: string): string {
  return `uploads/${uploadId}`;
}
