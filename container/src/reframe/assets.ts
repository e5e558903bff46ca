/**
 * Where the face model's weights and TensorFlow.js's WebAssembly files are
 * at run time. Nothing is ever downloaded: both ship inside npm packages
 * (@vladmandic/face-api/model, @tensorflow/tfjs-backend-wasm/dist).
 *
 * - The engine image: scripts/build-engine.ts copies the few files needed
 *   into container/dist/face-model/ beside server.mjs, and the Dockerfile
 *   copies that folder next to it.
 * - Development and tests (tsx): the packages in node_modules.
 * - FACE_MODEL_DIR overrides both (a folder holding all the files).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The weights: the tiny face detector (190 KB) and the 68-point landmark net
 * (350 KB; its tiny sibling could not tell a closed mouth from an open one
 * once the face's box moved by a few pixels).
 */
export const MODEL_FILES = [
  "tiny_face_detector_model-weights_manifest.json",
  "tiny_face_detector_model.bin",
  "face_landmark_68_model-weights_manifest.json",
  "face_landmark_68_model.bin",
] as const;
/** TensorFlow.js picks one of these by what the CPU and runtime support. */
export const WASM_FILES = ["tfjs-backend-wasm.wasm", "tfjs-backend-wasm-simd.wasm", "tfjs-backend-wasm-threaded-simd.wasm"] as const;
/** Folder beside the bundle that build-engine.ts fills. */
export const BUNDLED_ASSET_DIR = "face-model";

export interface FaceAssets {
  modelDir: string;
  /** With a trailing separator: TensorFlow.js joins file names onto it. */
  wasmDir: string;
}

function withSlash(dir: string): string {
  return dir.endsWith(path.sep) ? dir : dir + path.sep;
}

function hasAll(dir: string, files: readonly string[]): boolean {
  return files.every((f) => existsSync(path.join(dir, f)));
}

export function locateFaceAssets(env: NodeJS.ProcessEnv = process.env): FaceAssets {
  const override = env.FACE_MODEL_DIR?.trim();
  if (override) {
    if (!hasAll(override, [...MODEL_FILES, ...WASM_FILES])) {
      throw new Error(`FACE_MODEL_DIR=${override} lacks the face model or the TensorFlow.js wasm files`);
    }
    return { modelDir: override, wasmDir: withSlash(override) };
  }
  const here = path.dirname(fileURLToPath(import.meta.url));
  const bundled = path.join(here, BUNDLED_ASSET_DIR);
  if (hasAll(bundled, [...MODEL_FILES, ...WASM_FILES])) return { modelDir: bundled, wasmDir: withSlash(bundled) };
  const require = createRequire(import.meta.url);
  const faceApi = path.dirname(require.resolve("@vladmandic/face-api/package.json"));
  const tfWasm = path.dirname(require.resolve("@tensorflow/tfjs-backend-wasm/package.json"));
  return { modelDir: path.join(faceApi, "model"), wasmDir: withSlash(path.join(tfWasm, "dist")) };
}
