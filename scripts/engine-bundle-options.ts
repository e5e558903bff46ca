/**
 * esbuild options of the engine bundle (scripts/build-engine.ts), shared with
 * the test that checks bundled code finds its run-time files.
 */
import type { BuildOptions } from "esbuild";

export const engineBundleOptions: BuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: false,
  legalComments: "none",
  // What the bundle loads from node_modules at run time: exactly the engine
  // package's dependencies and optionalDependencies (container/package.json; a
  // test keeps the two lists equal). onnxruntime-node is a native module, which
  // the image installs from the lock beside the bundle; the WebAssembly ffmpeg
  // loads @ffmpeg/core, optional because the image runs native ffmpeg.
  external: ["@ffmpeg/core", "onnxruntime-node"],
  // Bundled CommonJS code calls require() and reads __dirname/__filename
  // (TensorFlow.js's wasm loader does): give the ESM bundle all three. The
  // two names are swapped for banner constants rather than declared, so a
  // module that declares its own cannot clash with them.
  banner: {
    js: [
      "import { createRequire as __engineCreateRequire } from 'node:module';",
      "import { fileURLToPath as __engineFileURLToPath } from 'node:url';",
      "import { dirname as __engineDirnameOf } from 'node:path';",
      "const require = __engineCreateRequire(import.meta.url);",
      "const __engineFilename = __engineFileURLToPath(import.meta.url);",
      "const __engineDirname = __engineDirnameOf(__engineFilename);",
    ].join(" "),
  },
  define: { __dirname: "__engineDirname", __filename: "__engineFilename" },
  logLevel: "warning",
};
