/**
 * The demo's sample video, made with the test-media generator and cached
 * under .tmp/demo/ so a second run starts at once. With espeak-ng installed
 * its sound is a spoken script (scripts/demo/script.ts, two voices over a
 * soft music bed) embedded as a subtitle track too, so the clips come back
 * captioned and titled with no speech-to-text service. Without a native
 * ffmpeg it is made with the engine's WebAssembly ffmpeg instead, smaller and
 * without speech, because that build is about ten times slower.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { buildGenerateArgs, cachedMedia, demoSpec, planMedia, type MediaFacts, type MediaSpec } from "../../test/media/generate.ts";
import { cachedNarration } from "../../test/media/narration.ts";
import { DEMO_SCRIPT } from "./script.ts";

export interface Sample {
  path: string;
  facts: MediaFacts;
  /** Sentences spoken (and in the subtitle track); null for a sample without speech. */
  spokenSentences: number | null;
  /** Why the sample has no speech, when it has none. */
  note: string | null;
}

function hasEspeak(): boolean {
  return spawnSync("espeak-ng", ["--version"], { stdio: "ignore" }).status === 0;
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
  if (existsSync(path)) return { path, facts, spokenSentences: null, note: "the WebAssembly sample has no speech" };
  // Loaded only here: the WebAssembly runner is heavy and a native machine never needs it.
  const { createRunner } = await import("../../container/src/ffmpeg/index.ts");
  const runner = await createRunner({ prefer: "wasm" });
  const partial = `${path}.partial.mp4`;
  const result = await runner.ffmpeg({ args: buildGenerateArgs(facts, partial), inputs: [], outputs: [partial], timeoutMs: 15 * 60_000 });
  if (result.exitCode !== 0) throw new Error(`the WebAssembly ffmpeg could not make the sample: ${result.stderrTail}`);
  await rename(partial, path);
  return { path, facts, spokenSentences: null, note: "the WebAssembly sample has no speech" };
}

export async function demoSample(dir: string, nativeFfmpeg: boolean): Promise<Sample> {
  await mkdir(dir, { recursive: true });
  if (!nativeFfmpeg) return wasmSample(dir);
  const picture = await cachedMedia(demoSpec(), dir);
  if (!hasEspeak()) return { ...picture, spokenSentences: null, note: "espeak-ng is not installed, so the sample has no speech and no captions" };
  const spec = demoSpec();
  const narration = await cachedNarration(
    { sentences: DEMO_SCRIPT, bedDb: 20, subtitleTrack: true, gapSeconds: 0.9, picture: picture.path, width: spec.width, height: spec.height, minDurationSeconds: spec.durationSeconds },
    dir,
  );
  // The picture's planted structure (scenes, motion) stays; its sound is now the spoken script.
  return { path: narration.path, facts: { ...picture.facts, durationSeconds: narration.durationSeconds }, spokenSentences: narration.sentences.length, note: null };
}
