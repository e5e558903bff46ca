import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      /** Overrides the generated requests per fuzz property (test/worker/fuzz/runs.ts); empty: the full count. */
      FUZZ_RUNS: string;
      FUZZ_SEED: string;
    }
  }
}
export {};
