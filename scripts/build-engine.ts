/**
 * `npm run build:engine`: the engine bundle in container/dist, the folder
 * the engine's Docker image copies (scripts/lib/engine-build.ts says what
 * goes in it).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildEngineBundle } from "./lib/engine-build.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const built = await buildEngineBundle(root, path.join(root, "container/dist"));
console.log(`built ${path.relative(root, built.serverPath)} (${Math.round(built.bytes / 1024)} KiB)`);
