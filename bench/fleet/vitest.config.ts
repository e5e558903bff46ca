import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// `npm run bench:fleet`: the fleet simulation (test/worker/fleet/) at several
// sizes, in the same Workers pool as the worker suite (real D1, Queues
// consumer code and Durable Objects; the Container binding is the stand-in).
export default defineConfig(async () => {
  const migrations = await readD1Migrations("src/db/migrations");
  return {
    plugins: [
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        // Workers AI has no local simulation; nothing here calls it.
        remoteBindings: false,
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "bench-admin-token",
            // The Worker's engine keys (README "Engine credentials"): an Ed25519 private key (PKCS#8, base64) and the callback token secret.
            ENGINE_SIGNING_KEY: "MC4CAQAwBQYDK2VwBCIEINIBHIrBPWTIDIv+izQzLRzmQESvxaiBolup+xAyI9QZ",
            CALLBACK_TOKEN_SECRET: "test-callback-token-secret-0123456789abcdef",
            ENGINE_URL: "http://engine.test",
            CALLBACK_BASE: "http://worker.test",
            CDN_URL: "http://worker.test/cdn",
            ALLOW_PRIVATE_SOURCES: "false",
          },
        },
      }),
    ],
    test: {
      include: ["bench/fleet/**/*.bench-run.ts"],
      setupFiles: ["./test/worker/setup.ts"],
      testTimeout: 3_600_000,
      // One simulation at a time: they share the machine's two cores.
      fileParallelism: false,
      // The Worker's warnings (every refused start is retried and logged) would be thousands of lines: the
      // figures are printed on stdout.
      onConsoleLog: (_log: string, type: "stdout" | "stderr") => type === "stdout",
    },
  };
});
