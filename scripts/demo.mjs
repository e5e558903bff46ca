#!/usr/bin/env node
// `npm run demo`: plain Node with no dependencies, so it runs on a fresh clone.
// Installs the locked packages when they are missing, says which ffmpeg the
// engine will use, then runs scripts/demo.ts under tsx with the same arguments.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDependencies, hasNativeFfmpeg } from "./ensure-deps.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

ensureDependencies();

const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
if (!hasNativeFfmpeg()) {
  console.log(
    "No native ffmpeg/ffprobe found: the engine will use its WebAssembly ffmpeg fallback.\n" +
      "That works, but it is about ten times slower, so the demo uses a smaller sample.\n" +
      "Install the native one with:  sudo apt-get install -y ffmpeg\n",
  );
  env.ENGINE_FFMPEG_BACKEND = "wasm";
}

const child = spawn(process.execPath, ["--import", "tsx", join(root, "scripts", "demo.ts"), ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: "inherit",
});
// The child stops the stack itself; it ignores a second copy of a terminal's Ctrl-C.
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
