/**
 * Bundles the clip engine (container/src/server.ts and everything it imports,
 * the shared contract and zod included) into one ESM file,
 * container/dist/server.mjs: the only file the engine's Docker image copies.
 *
 * Beside it goes wasm-worker.js, the worker thread of the WebAssembly ffmpeg
 * backend (wasm.ts looks for it next to the bundle). The image runs native
 * ffmpeg and does not need it; a local `node container/dist/server.mjs` on a
 * machine without ffmpeg does.
 */
import { build, type BuildOptions } from "esbuild";
import { stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = path.join(root, "container/dist/server.mjs");

const common: BuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: false,
  legalComments: "none",
  // The WebAssembly ffmpeg loads its core from node_modules at run time; the
  // image runs native ffmpeg and never reaches that code.
  external: ["@ffmpeg/core", "@ffmpeg/ffmpeg"],
  // Some bundled CommonJS code calls require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __engineCreateRequire } from 'node:module'; const require = __engineCreateRequire(import.meta.url);" },
  logLevel: "warning",
};

await build({ ...common, entryPoints: [path.join(root, "container/src/server.ts")], outfile });
await build({
  ...common,
  entryPoints: [path.join(root, "container/src/ffmpeg/wasm-worker.ts")],
  outfile: path.join(root, "container/dist/wasm-worker.js"),
});

const size = (await stat(outfile)).size;
console.log(`built ${path.relative(root, outfile)} (${Math.round(size / 1024)} KiB)`);
