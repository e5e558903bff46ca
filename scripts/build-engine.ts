/**
 * Bundles the clip engine (container/src/server.ts and everything it imports,
 * the shared contract and zod included) into one ESM file,
 * container/dist/server.mjs: the only file the engine's Docker image copies.
 *
 * Beside it goes wasm-worker.js, the worker thread of the WebAssembly ffmpeg
 * backend (wasm.ts looks for it next to the bundle). The image runs native
 * ffmpeg and does not need it; a local `node container/dist/server.mjs` on a
 * machine without ffmpeg does.
 *
 * Beside it also goes face-model/: the face detector's weights and the
 * TensorFlow.js WebAssembly binaries (both from npm packages), which the
 * bundled detector loads from disk at run time (reframe/assets.ts); the
 * Dockerfile copies the folder next to the bundle.
 */
import { build, type BuildOptions } from "esbuild";
import { engineBundleOptions } from "./engine-bundle-options.ts";
import { copyFile, mkdir, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BUNDLED_ASSET_DIR, MODEL_FILES, WASM_FILES } from "../container/src/reframe/assets.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = path.join(root, "container/dist/server.mjs");

const common: BuildOptions = engineBundleOptions;

await build({ ...common, entryPoints: [path.join(root, "container/src/server.ts")], outfile });
await build({
  ...common,
  entryPoints: [path.join(root, "container/src/ffmpeg/wasm-worker.ts")],
  outfile: path.join(root, "container/dist/wasm-worker.js"),
});

const requireHere = createRequire(import.meta.url);
const assetDir = path.join(root, "container/dist", BUNDLED_ASSET_DIR);
await rm(assetDir, { recursive: true, force: true });
await mkdir(assetDir, { recursive: true });
const faceApiDir = path.dirname(requireHere.resolve("@vladmandic/face-api/package.json"));
const tfWasmDir = path.dirname(requireHere.resolve("@tensorflow/tfjs-backend-wasm/package.json"));
for (const file of MODEL_FILES) await copyFile(path.join(faceApiDir, "model", file), path.join(assetDir, file));
for (const file of WASM_FILES) await copyFile(path.join(tfWasmDir, "dist", file), path.join(assetDir, file));

const size = (await stat(outfile)).size;
console.log(`built ${path.relative(root, outfile)} (${Math.round(size / 1024)} KiB)`);
