import { randomBase62 } from "../lib/random.ts";

/** A new job id: `job_` + 15 random bytes in base62 (120 bits; SPEC asks for at least 80). */
export function newJobId(): string {
  return `job_${randomBase62(15)}`;
}

/** Cheap shape check before touching the database. */
export function isJobId(value: string): boolean {
  return /^job_[A-Za-z0-9]{16,40}$/.test(value);
}
