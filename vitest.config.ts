import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { InterleavedSequencer } from "./test/interleaved-sequencer.ts";

// Two projects: the Worker runs inside workerd (real D1, R2, Queues and Durable
// Objects from miniflare); the engine, scripts and end-to-end suites run in Node.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("src/db/migrations");
  return {
    test: {
      // Two files at a time on a 2-core machine (vitest's default is cores - 1, i.e. one at a time here): a
      // Workers-pool file keeps about one core busy, most node files wait on ffmpeg, a stack or a browser.
      maxWorkers: 2,
      sequence: { sequencer: InterleavedSequencer },
      projects: [
        {
          plugins: [
            cloudflareTest({
              main: "./src/index.ts",
              wrangler: { configPath: "./wrangler.toml" },
              // Workers AI has no local simulation; tests pass a stand-in AI binding where they need one.
              remoteBindings: false,
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  // At least 32 characters: the operator API refuses a shorter token (src/admin/guard.ts).
                  ADMIN_TOKEN: "test-admin-token-0123456789abcdef",
                  // The Worker's engine keys (docs/architecture.md "Engine credentials"): an Ed25519 private key (PKCS#8, base64) and the callback token secret.
                  ENGINE_SIGNING_KEY: "MC4CAQAwBQYDK2VwBCIEIG+/Cp5HI/Pqo8otdoFlUhQKHHQZz9Q8z2OEXFmxriNu",
                  CALLBACK_TOKEN_SECRET: "test-callback-token-secret-0123456789abcdef",
                  // The key platform cookies files are sealed with (src/cookies/crypto.ts).
                  COOKIES_KEY: "test-cookies-key-0123456789abcdef0123456789abcdef",
                  ENGINE_URL: "http://engine.test",
                  CALLBACK_BASE: "http://worker.test",
                  CDN_URL: "http://worker.test/cdn",
                  ALLOW_PRIVATE_SOURCES: "false",
                  // Suites that are not about capacity never wait for an engine; the fleet suites set their own.
                  ENGINE_MAX_INSTANCES: "10000",
                  ENGINE_VCPU_LIMIT: "40000",
                  FUZZ_RUNS: process.env.FUZZ_RUNS ?? "",
                  FUZZ_SEED: process.env.FUZZ_SEED ?? "",
                  // Small, so the pre-authentication limit's suite needs few requests.
                  PRE_AUTH_REQUESTS_PER_MINUTE: "20",
                },
              },
            }),
          ],
          test: {
            name: "worker",
            include: ["test/worker/**/*.test.ts"],
            setupFiles: ["./test/worker/setup.ts"],
            // Not vitest's 5 s: on a loaded machine (CI beside other work) a test of many requests takes longer
            // without being wrong. Tests that wait for something say what they wait for, not how long.
            testTimeout: 60_000,
            hookTimeout: 60_000,
          },
        },
        {
          test: {
            name: "node",
            environment: "node",
            // test/browser: the dashboard in headless Chromium, on the same shared stack as test/e2e.
            include: ["client/test/**/*.test.ts", "container/test/**/*.test.ts", "test/architecture/**/*.test.ts", "test/parsers/**/*.test.ts", "test/export/**/*.test.ts", "test/deploy/**/*.test.ts", "test/e2e/**/*.test.ts", "test/browser/**/*.test.ts"],
            testTimeout: 120_000,
            hookTimeout: 180_000,
            // Opens a control server only; the e2e stack starts when an e2e file asks for it.
            globalSetup: ["./test/e2e/harness/global-setup.ts"],
          },
        },
      ],
    },
  };
});
