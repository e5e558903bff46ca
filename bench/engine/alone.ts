/**
 * `npm run bench:engine:alone`: the engine alone (no Worker, no queue), one
 * real job through the clip engine against the ffmpeg floor, on a generated 10-minute 1080p30 source (cached in .tmp/bench)
 * cut into 5 vertical 1080x1920 clips of about 30 s.
 *
 * The engine is the production bundle run as its own Node process (see
 * engine-job.ts), so its memory and CPU are measured alone, with
 * ENGINE_RENDER_CONCURRENCY=2 (BENCH_RENDER_CONCURRENCY overrides): two clips
 * render at once even on this 2-core machine, to show the pipeline's
 * scheduling. Then the floor (floor.ts) runs the bare ffmpeg commands for the
 * same source and clip spans, with the same number of encodes at once, and
 * the thumbnail is taken both ways on the job's clips (thumbnails.ts).
 *
 * `npm run bench:engine:alone -- --growth` also runs the job on 1, 5 and 30 minutes
 * of the same source (stream-copied from it, growth.ts) and prints analysis,
 * render and total time per length with the fitted line through them.
 *
 * Prints wall and CPU time of the job and the floor, their ratios, the
 * analysis realtime factor, peak memory, the load average with every figure.
 * Writes the figures to bench/results/engine-alone-<time>.json.
 */
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ClipConfig } from "#contract";
import { PROJECT_ROOT } from "../../scripts/local-stack/paths.ts";
import { startEngineHarness, type JobFigures } from "./engine-job.ts";
import { measureFloor } from "./floor.ts";
import { GROWTH_MINUTES, QUICK_GROWTH_MINUTES, fitLine, fitMinutesAndClips, growthSource } from "./growth.ts";
import { selectedBenchSource } from "./source.ts";
import { measureThumbnails } from "./thumbnails.ts";

const CONFIG = ClipConfig.parse({ aspect_ratio: "9:16", resolution: 1080, min_clip_seconds: 25, max_clip_seconds: 35, max_clips: 5, reframe: "center" });
const VIDEO_TYPE = "general";
const WORK = path.join(PROJECT_ROOT, ".tmp", "bench", "run");
const RENDER_CONCURRENCY = Number(process.env.BENCH_RENDER_CONCURRENCY ?? 2);
const GROWTH = process.argv.includes("--growth");
const LENGTHS = process.env.BENCH_ENGINE_QUICK === "1" ? QUICK_GROWTH_MINUTES : GROWTH_MINUTES;

function round(value: number, digits = 1): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

function load(): number {
  return round(os.loadavg()[0] ?? 0, 2);
}

function growthRow(minutes: number, job: JobFigures) {
  return {
    minutes,
    analysis_s: round(job.analysisSeconds),
    render_s: round(job.renderSeconds),
    total_s: round(job.jobSeconds),
    engine_cpu_s: round(job.cpuSeconds),
    clips: job.report.clips.length,
    load_1m: round(job.loadAverage, 2),
  };
}

async function main(): Promise<void> {
  console.log("bench:engine:alone: preparing the 10-minute 1080p30 source (generated once, then cached in .tmp/bench)...");
  const generationStart = performance.now();
  const { path: sourcePath, facts } = await selectedBenchSource();
  console.log(`source: ${sourcePath} (${round((await stat(sourcePath)).size / 1e6)} MB, ready in ${round((performance.now() - generationStart) / 1000)} s)`);
  const growthSources = new Map<number, string>();
  if (GROWTH) {
    for (const minutes of LENGTHS) growthSources.set(minutes, await growthSource(sourcePath, facts.durationSeconds, minutes));
    console.log(`growth sources ready: ${[...growthSources.values()].map((p) => path.basename(p)).join(", ")}`);
  }

  await rm(WORK, { recursive: true, force: true });
  await mkdir(WORK, { recursive: true });
  const harness = await startEngineHarness(WORK, { ENGINE_RENDER_CONCURRENCY: String(RENDER_CONCURRENCY) });
  try {
    const loadBefore = load();
    const job = await harness.runJob(sourcePath, VIDEO_TYPE, CONFIG);
    const serverPeakMb = await harness.serverPeakRssMb();

    console.log(`thumbnails: both ways on the job's ${job.report.clips.length} clips...`);
    const thumbnails = await measureThumbnails(sourcePath, job.report, job.clipFiles, CONFIG, WORK);
    const loadAfterThumbnails = load();

    console.log(`floor: the same analysis commands, encodes (${RENDER_CONCURRENCY} at once) and thumbnails with plain ffmpeg...`);
    const floor = await measureFloor(sourcePath, facts, job.report.clips.map((c) => ({ start: c.start_seconds, end: c.end_seconds })), path.join(WORK, "floor"), RENDER_CONCURRENCY);
    const loadAfterFloor = load();

    const growth: ReturnType<typeof growthRow>[] = [];
    if (GROWTH) {
      for (const minutes of LENGTHS) {
        if (minutes * 60 === facts.durationSeconds) {
          growth.push(growthRow(minutes, job));
          continue;
        }
        console.log(`growth: the job on ${minutes} minutes of source...`);
        growth.push(growthRow(minutes, await harness.runJob(growthSources.get(minutes)!, VIDEO_TYPE, CONFIG)));
      }
    }

    const figures = {
      source: { duration_seconds: facts.durationSeconds, width: facts.width, height: facts.height, fps: facts.fps },
      render_concurrency: RENDER_CONCURRENCY,
      clips: job.report.clips.map((c) => ({ start: round(c.start_seconds, 2), end: round(c.end_seconds, 2), seconds: round(c.end_seconds - c.start_seconds, 2), width: c.width, height: c.height, score: c.score, reasons: c.reasons.join(",") })),
      job_wall_seconds: round(job.jobSeconds),
      engine_processing_seconds: round(job.processingSeconds),
      engine_analysis_seconds: round(job.analysisSeconds, 2),
      engine_render_and_upload_seconds: round(job.renderSeconds),
      engine_cpu_seconds: round(job.cpuSeconds),
      floor_seconds: round(floor.totalSeconds),
      floor_analysis_seconds: round(floor.analysisSeconds, 2),
      floor_encodes_seconds: round(floor.encodesSeconds),
      floor_encode_seconds: floor.encodeSeconds.map((s) => round(s)),
      floor_cpu_seconds: round(floor.cpuSeconds),
      ratio_job_to_floor: round(job.jobSeconds / floor.totalSeconds, 3),
      ratio_processing_to_floor: round(job.processingSeconds / floor.totalSeconds, 3),
      ratio_cpu_to_floor: round(job.cpuSeconds / floor.cpuSeconds, 3),
      analysis_realtime_factor_engine: round(facts.durationSeconds / job.analysisSeconds),
      analysis_realtime_factor_floor: round(facts.durationSeconds / floor.analysisSeconds),
      thumbnail_from_source: { wall_median_s: round(thumbnails.source.wallMedian, 3), cpu_median_s: round(thumbnails.source.cpuMedian, 3) },
      thumbnail_from_clip: { wall_median_s: round(thumbnails.clip.wallMedian, 3), cpu_median_s: round(thumbnails.clip.cpuMedian, 3) },
      thumbnail_rule_chose: thumbnails.chosen,
      source_keyframe_gap_seconds: round(thumbnails.sourceKeyframeGap, 2),
      server_peak_rss_mb: round(serverPeakMb),
      ffmpeg_largest_peak_rss_mb: round(job.ffmpegLargestPeakMb),
      ffmpeg_concurrent_peak_rss_mb: round(job.ffmpegConcurrentPeakMb),
      ffmpeg_processes: job.ffmpegProcesses,
      bench_process_peak_rss_mb: round(process.resourceUsage().maxRSS / 1024),
      load_average_1m: { before_job: loadBefore, after_job: round(job.loadAverage, 2), after_thumbnails: loadAfterThumbnails, after_floor: loadAfterFloor },
      growth: GROWTH
        ? {
            rows: growth,
            total: fitMinutesAndClips(growth.map((g) => ({ minutes: g.minutes, clips: g.clips, y: g.total_s }))),
            analysis: fitLine(growth.map((g) => ({ x: g.minutes, y: g.analysis_s }))),
            render_per_clip: growth.map((g) => round(g.render_s / g.clips)),
          }
        : null,
      cpus: os.cpus().length,
      targets: { ratio_max: 1.05, analysis_realtime_min: 50, server_peak_mb_max: 300 },
    };
    console.log("");
    console.table(figures.clips);
    console.log(`render concurrency (engine and floor):     ${RENDER_CONCURRENCY} on ${figures.cpus} cores`);
    console.log(`job wall time (POST /jobs -> complete):    ${figures.job_wall_seconds} s  (load ${loadBefore} before, ${figures.load_average_1m.after_job} after)`);
    console.log(`engine processing (analysis -> complete):  ${figures.engine_processing_seconds} s  (analysis ${figures.engine_analysis_seconds} s, render+upload ${figures.engine_render_and_upload_seconds} s)`);
    console.log(`ffmpeg floor (analysis + encodes + thumbs): ${figures.floor_seconds} s  (analysis ${figures.floor_analysis_seconds} s, encodes ${figures.floor_encodes_seconds} s: ${figures.floor_encode_seconds.join(" / ")}; load after ${loadAfterFloor})`);
    console.log(`ratio job / floor:                         ${figures.ratio_job_to_floor}  (target <= 1.05)`);
    console.log(`ratio processing / floor:                  ${figures.ratio_processing_to_floor}`);
    console.log(`CPU: engine ${figures.engine_cpu_seconds} s, floor ${figures.floor_cpu_seconds} s, ratio ${figures.ratio_cpu_to_floor}`);
    console.log(`analysis realtime factor (engine step):    ${figures.analysis_realtime_factor_engine}x  (floor commands ${figures.analysis_realtime_factor_floor}x; target >= 50x)`);
    console.log(
      `thumbnail, median per clip:                from the source ${figures.thumbnail_from_source.wall_median_s} s wall / ${figures.thumbnail_from_source.cpu_median_s} s CPU; ` +
        `from the clip ${figures.thumbnail_from_clip.wall_median_s} s / ${figures.thumbnail_from_clip.cpu_median_s} s ` +
        `(source keyframes every ${figures.source_keyframe_gap_seconds} s; the engine's rule chose ${thumbnails.chosen.join(", ")}; load ${loadAfterThumbnails})`,
    );
    console.log(`server peak RSS:                           ${figures.server_peak_rss_mb} MB  (target < 300 MB)`);
    console.log(`ffmpeg peak RSS: largest ${figures.ffmpeg_largest_peak_rss_mb} MB, concurrent ${figures.ffmpeg_concurrent_peak_rss_mb} MB over ${figures.ffmpeg_processes} processes`);
    if (figures.growth) {
      console.log("\ngrowth of the job with source length (same 5-clip config):");
      console.table(figures.growth.rows);
      const { total, analysis, render_per_clip: perClip } = figures.growth;
      console.log(`analysis fit:  ${round(analysis.intercept, 2)} s + ${round(analysis.slope, 2)} s per minute of source`);
      console.log(`render+upload per clip, per length: ${perClip.join(" / ")} s`);
      console.log(`total fit:     ${round(total.fixed)} s + ${round(total.perMinute, 2)} s per minute of source + ${round(total.perClip)} s per clip`);
      for (const g of growth) {
        const predicted = total.fixed + total.perMinute * g.minutes + (Number.isNaN(total.perClip) ? 0 : total.perClip * g.clips);
        console.log(`  ${g.minutes} min, ${g.clips} clips: measured ${g.total_s} s, fit ${round(predicted)} s`);
      }
    }
    const resultsDir = path.join(PROJECT_ROOT, "bench", "results");
    await mkdir(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `engine-alone-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    await writeFile(file, JSON.stringify(figures, null, 2));
    console.log(`machine: ${figures.cpus} cores; figures written to ${path.relative(PROJECT_ROOT, file)}`);
  } finally {
    await harness.close();
    await rm(WORK, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
