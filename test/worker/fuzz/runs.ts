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
