#!/usr/bin/env node
// Plain Node, no dependencies: runs before `npm test` and `npm run demo` so a
// fresh clone needs nothing but Node 20. Installs the locked packages when
// node_modules is missing or older than the lock file, and reports whether a
// native ffmpeg is available.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export function ensureDependencies() {
  const lock = join(root, "package-lock.json");
  const marker = join(root, "node_modules", ".package-lock.json");
  const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs;
  if (!stale) return;
  console.log("Installing dependencies (npm ci)...");
  // package.json's allowScripts already keeps onnxruntime-node from fetching CUDA libraries (npm 11.16+);
  // the variable its install script reads does the same for an older npm.
  const env = { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" };
  const res = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit", env });
  if (res.status !== 0) {
    console.error("npm ci failed: see the output above.");
    process.exit(res.status ?? 1);
  }
}

export function hasNativeFfmpeg() {
  const bin = process.env.FFMPEG_PATH || "ffmpeg";
  const probe = process.env.FFPROBE_PATH || "ffprobe";
  const ok = (cmd) => spawnSync(cmd, ["-version"], { stdio: "ignore" }).status === 0;
  return ok(bin) && ok(probe);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureDependencies();
  if (process.argv.includes("--require-ffmpeg") && !hasNativeFfmpeg()) {
    console.error(
      "The tests need a native ffmpeg and ffprobe (they generate and check real media).\n" +
        "Install them with: sudo apt-get install -y ffmpeg",
    );
    process.exit(1);
  }
  if (process.argv.includes("--require-ffmpeg") && spawnSync("espeak-ng", ["--version"], { stdio: "ignore" }).status !== 0) {
    console.error(
      "The speech-detection tests need espeak-ng (they speak their test sentences with it).\n" +
        "Install it with: sudo apt-get install -y espeak-ng",
    );
    process.exit(1);
  }
}
