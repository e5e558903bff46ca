/**
 * The demo's sample video, made with the test-media generator and cached
 * under .tmp/demo/ so a second run starts at once. Without a native ffmpeg it
 * is made with the engine's WebAssembly ffmpeg instead, smaller, because that
 * build is about ten times slower.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { buildGenerateArgs, cachedMedia, demoSpec, planMedia, type MediaFacts, type MediaSpec } from "../../test/media/generate.ts";

export interface Sample {
  path: string;
  facts: MediaFacts;
}

/** The WebAssembly build's sample: one minute at 640x360, same kinds of moments. */
function lightSpec(): MediaSpec {
  return { ...demoSpec(), durationSeconds: 60, width: 640, height: 360, fps: 15, bursts: [12, 41], sceneChanges: [10, 24, 38, 50] };
}

async function wasmSample(dir: string): Promise<Sample> {
  const facts = planMedia(lightSpec());
  // Named by what it plants, so a changed spec makes a new file.
  const key = createHash("sha256").update(JSON.stringify(facts)).digest("hex").slice(0, 12);
  const path = join(dir, `sample-light-${key}.mp4`);
  if (existsSync(path)) return { path, facts };
  // Loaded only here: the WebAssembly runner is heavy and a native machine never needs it.
  const { createRunner } = await import("../../container/src/ffmpeg/index.ts");
  const runner = await createRunner({ prefer: "wasm" });
  const partial = `${path}.partial.mp4`;
  const result = await runner.ffmpeg({ args: buildGenerateArgs(facts, partial), inputs: [], outputs: [partial], timeoutMs: 15 * 60_000 });
  if (result.exitCode !== 0) throw new Error(`the WebAssembly ffmpeg could not make the sample: ${result.stderrTail}`);
  await rename(partial, path);
  return { path, facts };
}

export async function demoSample(dir: string, nativeFfmpeg: boolean): Promise<Sample> {
  await mkdir(dir, { recursive: true });
  return nativeFfmpeg ? cachedMedia(demoSpec(), dir) : wasmSample(dir);
}
