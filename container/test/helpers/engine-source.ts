/**
 * Generated sources for the analysis and render tests, probed by the engine's
 * own probe so the tests see exactly what a job would see.
 */
import { stat } from "node:fs/promises";
import { cachedMedia, type MediaFacts, type MediaSpec } from "../../../test/media/generate.ts";
import type { FfmpegRunner } from "../../src/ffmpeg/runner.ts";
import { probeSource } from "../../src/source/probe.ts";
import type { SourceInfo } from "../../src/shared/types.ts";

export interface GeneratedSource {
  source: SourceInfo;
  facts: MediaFacts;
}

export async function generatedSource(runner: FfmpegRunner, spec: MediaSpec): Promise<GeneratedSource> {
  const { path, facts } = await cachedMedia(spec, ".tmp/media");
  const source = await probeSource({
    runner,
    path,
    sizeBytes: (await stat(path)).size,
    videoUrl: "https://media.test/generated.mp4",
    platformTitle: null,
    maxSourceSeconds: 3 * 3600,
    signal: new AbortController().signal,
  });
  return { source, facts };
}
