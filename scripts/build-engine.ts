/**
 * `npm run build:engine`: the engine bundle in container/dist, the folder
 * the engine's Docker image copies, with the lock and manifests the image
 * installs the engine package's dependencies from (scripts/lib/engine-build.ts
 * says what goes in it).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildEngineBundle, stageEngineInstall } from "./lib/engine-build.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.join(root, "container/dist");
const built = await buildEngineBundle(root, outDir);
await stageEngineInstall(root, outDir);
console.log(`built ${path.relative(root, built.serverPath)} (${Math.round(built.bytes / 1024)} KiB)`);
