const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** 20 base62 characters carry 119 bits, well above the 80 the spec asks for. */
const SUFFIX_LENGTH = 20;

/**
 * A new job id: `job_` + 20 base62 characters. Bytes at or above 248 are
 * redrawn so every character is equally likely (248 = 4 * 62).
 */
export function newJobId(): string {
  let suffix = "";
  while (suffix.length < SUFFIX_LENGTH) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    for (const byte of bytes) {
      if (byte < 248 && suffix.length < SUFFIX_LENGTH) suffix += BASE62[byte % 62];
    }
  }
  return `job_${suffix}`;
}

/** Cheap shape check before touching the database. */
export function isJobId(value: string): boolean {
  return /^job_[A-Za-z0-9]{16,40}$/.test(value);
}
