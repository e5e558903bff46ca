/**
 * For the few files that are one journey in order (a visitor's session, one
 * account's jobs through their states): a step that needs what an earlier
 * step made asks for it here, and fails at once, saying what is missing,
 * when that step did not run or failed, instead of going on with an empty
 * value that fails later in a confusing way (or, worse, passes).
 */
export function made<T>(value: T | undefined, what: string): T {
  if (value === undefined || value === "") throw new Error(`this step needs ${what}, made by an earlier step of this file, which did not run or failed`);
  return value;
}
