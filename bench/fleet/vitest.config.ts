import { statfsSync } from "node:fs";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Miniflare's "in-memory" storage is a temporary directory (os.tmpdir()): every Durable Object's SQLite file,
// D1's and R2's blobs. On a disk, SQLite's syncs made the simulation wait on the disk and spend system time
// (a 650-job run: 33.1 s of CPU and 102 s of wall on /tmp, 25.5 s and 61 s on /dev/shm, side by side). So a
// RAM-backed directory when the machine has one with room to spare, unless TMPDIR says otherwise.
function ramDirectory(): string | undefined {
  try {
    const fs = statfsSync("/dev/shm");
    return fs.bavail * fs.bsize > 2 ** 30 ? "/dev/shm" : undefined;
  } catch {
    return undefined;
  }
}
const ram = process.env.TMPDIR === undefined ? ramDirectory() : undefined;
if (ram !== undefined) process.env.TMPDIR = ram;

// `npm run bench:fleet`: the fleet simulation (test/worker/fleet/) at several
// sizes, in the same Workers pool as the worker suite (real D1, Queues
// consumer code and Durable Objects; the Container binding is the stand-in).
//
// One project per bench file: each project gets its own workerd process, and
// workerd runs a process's Workers, Durable Objects, D1 and R2 on one thread.
// `bench:fleet` so runs its two files (the size table and the 10,000-job
// scenario) at once, one core each, instead of one after the other.
const BENCHES = ["table", "scale", "scheduler", "pool"];

export default defineConfig(async () => {
  const migrations = await readD1Migrations("src/db/migrations");
  const project = (name: string) => ({
    plugins: [
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        // Workers AI has no local simulation; nothing here calls it.
        remoteBindings: false,
        miniflare: {
          // Durable Objects stay in memory between calls (wrangler.toml's bindings, plus unsafePreventEviction):
          // workerd evicts an idle object after seconds of wall time, and a simulated minute is a fraction of
          // a wall second, so each account's object was torn down and rebuilt (SQLite reopened, constructor
          // re-run) between almost every two of its calls, an artefact of compressed time that no deployment
          // sees at this rate. A deploy's resets are still played (abortAllDurableObjects in simulation.ts).
          durableObjects: Object.fromEntries(
            Object.entries({ ACCOUNTS: "AccountState", CLIENTS: "ClientGate", ENGINE: "ClipEngine", FLEET: "FleetScheduler", UPLOAD_STATE: "UploadState" }).map(
              ([binding, className]) => [binding, { className, useSQLite: true, unsafePreventEviction: true }],
            ),
          ),
          bindings: {
            TEST_MIGRATIONS: migrations,
            // At least 32 characters: the operator API refuses a shorter token (src/admin/guard.ts).
            ADMIN_TOKEN: "bench-admin-token-0123456789abcdef",
            // The Worker's engine keys (docs/architecture.md "Engine credentials"): an Ed25519 private key (PKCS#8, base64) and the callback token secret.
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
      name: `fleet-${name}`,
      include: [`bench/fleet/${name}.bench-run.ts`],
      setupFiles: ["./test/worker/setup.ts"],
      testTimeout: 3_600_000,
    },
  });
  return {
    test: {
      // Two files at once at most (this machine has two cores), each in its own workerd.
      maxWorkers: 2,
      projects: BENCHES.map(project),
      // The Worker's warnings (every refused start is retried and logged) would be thousands of lines: the
      // figures are printed on stdout.
      onConsoleLog: (_log: string, type: "stdout" | "stderr") => type === "stdout",
    },
  };
});
