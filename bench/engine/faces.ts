/**
 * `npm run bench:faces`: what face reframing costs, side by side in one run.
 *
 * One 60 s 1280x720 source composed from a photograph shipped in
 * @vladmandic/face-api (a person walking to and fro, a larger, faster orange
 * block as a distractor, a tone for audio; generated into .tmp/bench-faces).
 * The same job steps the engine runs (probe, analysis, then per clip: face
 * plan and render) run in this process twice: reframe=faces and
 * reframe=center, 9:16 1080x1920, two clips of 20-30 s.
 *
 * Prints per clip the face detection time (sampling + detection), its render
 * time, and per job the total and the share detection takes of it.
 * Writes the figures to bench/results/faces-<time>.json.
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { compose, PEOPLE } from "../../container/test/helpers/faces-media.ts";
import { nativeRunner } from "../../container/test/helpers/media.ts";
import { analyse } from "../../container/src/analyse/index.ts";
import { probeSource } from "../../container/src/probe.ts";
import { faceApi } from "../../container/src/reframe/detector.ts";
import { planReframe } from "../../container/src/reframe/plan.ts";
import { renderClip } from "../../container/src/render.ts";
import { outputSize } from "../../container/src/render-geometry.ts";
import { PROJECT_ROOT } from "../../scripts/local-stack/paths.ts";
import { ClipConfig } from "#contract";

const WORK = path.join(PROJECT_ROOT, ".tmp", "bench-faces");
const BASE = { aspect_ratio: "9:16", resolution: 1080, min_clip_seconds: 20, max_clip_seconds: 30, max_clips: 2 } as const;

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

async function main(): Promise<void> {
  await mkdir(WORK, { recursive: true });
  const sourcePath = path.join(WORK, "walk-60s.mp4");
  if (!(await stat(sourcePath).catch(() => null))) {
    console.log("bench:faces: composing the 60 s source...");
    await compose(sourcePath, {
      seconds: 60,
      width: 1280,
      height: 720,
      fps: 30,
      distractor: true,
      people: [{ person: PEOPLE.anna, width: 260, path: [[0, 60, 220], [12, 960, 260], [20, 960, 260], [34, 100, 240], [45, 100, 240], [60, 700, 220]], hidden: [40, 41] }],
    });
  }
  const runner = nativeRunner();
  const signal = new AbortController().signal;
  // Loading the model is once per engine process, not per job: done before the clock starts, reported apart.
  const loadStart = performance.now();
  await faceApi();
  const modelLoadMs = performance.now() - loadStart;

  const results: Record<string, unknown>[] = [];
  for (const reframe of ["faces", "center"] as const) {
    const config = ClipConfig.parse({ ...BASE, reframe });
    const jobStart = performance.now();
    const source = await probeSource({ runner, path: sourcePath, sizeBytes: (await stat(sourcePath)).size, videoUrl: "https://bench.test/walk.mp4", platformTitle: null, maxSourceSeconds: 3600, signal });
    const analysisStart = performance.now();
    const candidates = await analyse(runner, source, "vlog", config, { signal, onProgress: () => {} });
    const analysisMs = performance.now() - analysisStart;
    const clips: Record<string, unknown>[] = [];
    for (const [index, candidate] of candidates.entries()) {
      const plan = await planReframe({ runner, source, candidate, config, output: outputSize(config, source), rawPath: path.join(WORK, `faces-${index}.rgb`), signal, onProgress: () => {} });
      const renderStart = performance.now();
      await renderClip(runner, { source, candidate, config, outPath: path.join(WORK, `${reframe}-${index}.mp4`), thumbnailPath: path.join(WORK, `${reframe}-${index}.jpg`), signal, onProgress: () => {}, plan });
      const renderMs = performance.now() - renderStart;
      clips.push({ index, clip_seconds: Math.round((candidate.end - candidate.start) * 10) / 10, reframe: plan.used, faces: plan.facesCount, detection_s: seconds(plan.detectionMs), render_s: seconds(renderMs) });
    }
    const jobMs = performance.now() - jobStart;
    const detectionMs = clips.reduce((sum, c) => sum + Number(c.detection_s) * 1000, 0);
    results.push({ reframe, job_s: seconds(jobMs), analysis_s: seconds(analysisMs), detection_s: seconds(detectionMs), detection_share: Math.round((detectionMs / jobMs) * 1000) / 1000, clips });
  }
  const [faces, center] = results as [{ job_s: number }, { job_s: number }];
  const summary = { model_load_s: seconds(modelLoadMs), jobs: results, faces_vs_center: Math.round((faces.job_s / center.job_s) * 100) / 100 };
  console.log(JSON.stringify(summary, null, 2));
  const out = path.join(PROJECT_ROOT, "bench", "results");
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, `faces-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), JSON.stringify(summary, null, 2));
}

await main();
