import { env } from "cloudflare:test";

/**
 * Generated requests per fuzz property: `full` unless FUZZ_RUNS is set
 * (e.g. `FUZZ_RUNS=200 npx vitest run --project worker test/worker/fuzz-jobs.test.ts`
 * for a quick local pass on a busy machine; `npm test` and CI run the full count).
 */
export function fuzzRuns(full: number): number {
  const override = Number(env.FUZZ_RUNS);
  return Number.isInteger(override) && override > 0 ? override : full;
}

/**
 * fast-check's parameters for a fuzz property: `runs` requests, no shrinking
 * (the service keeps state between runs), and FUZZ_SEED's seed when set, so
 * a failure's printed `seed` replays the same requests (run the failing file
 * alone: its properties share the service's state in order).
 */
export function fuzzParameters(runs: number): { numRuns: number; endOnFailure: true; seed?: number } {
  const seed = Number(env.FUZZ_SEED);
  return env.FUZZ_SEED !== "" && Number.isInteger(seed) ? { numRuns: runs, endOnFailure: true, seed } : { numRuns: runs, endOnFailure: true };
}
