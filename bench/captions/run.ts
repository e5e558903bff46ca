/**
 * `npm run bench:captions`: what burning captions costs. One 30 s clip of a
 * 1080p source with real speech (espeak-ng, the speech tests' script) is
 * rendered to 1080x1920 by the engine's own renderClip, without captions and
 * with bold word-highlighted captions, alternately (plain, captioned, plain,
 * captioned) in one run so both see the same machine load; the best of each
 * is compared (target: captioned <= 1.10x plain, since libass draws in the
 * same encode). Also prints what a transcribed hour costs in Workers AI.
 *
 * It also times the picture filter graph alone (decode, crop, scale, with and
 * without the ass step, no encode), which isolates what libass adds from the
 * encoder's run-to-run noise on a busy machine.
 *
 * BENCH_CAPTIONS_QUICK=1 renders at 720 instead, to check the bench quickly;
 * BENCH_CAPTIONS_FILTER_ONLY=1 skips the full renders.
 * Writes bench/results/captions-<time>.json.
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ClipConfig } from "#contract";
import { prepareClipCaptions } from "../../container/src/captions/index.ts";
import { createNativeRunner } from "../../container/src/ffmpeg/native.ts";
import { probeSource } from "../../container/src/source/probe.ts";
import { buildClipArgs, renderClip } from "../../container/src/render/index.ts";
import { outputSize } from "../../container/src/render/geometry.ts";
import { buildTranscript, wordsFromCues } from "../../container/src/transcript/build.ts";
import { subtitleTrackCues } from "../../container/src/transcript/track.ts";
import { SCRIPT } from "../../container/test/helpers/script.ts";
import { cachedMedia } from "../../test/media/generate.ts";
import { cachedNarration } from "../../test/media/narration.ts";

/** Published price of @cf/openai/whisper-large-v3-turbo, per audio minute (USD). */
const WHISPER_USD_PER_MINUTE = 0.00051;
const ROUNDS = 2;
const quick = process.env.BENCH_CAPTIONS_QUICK === "1";
const work = path.resolve(".tmp", "bench", "captions");

async function main(): Promise<void> {
  await mkdir(work, { recursive: true });
  const runner = createNativeRunner({ ffmpegPath: process.env.FFMPEG_PATH || "ffmpeg", ffprobePath: process.env.FFPROBE_PATH || "ffprobe" });
  console.log("preparing the source (cached after the first run)...");
  const picture = await cachedMedia({ durationSeconds: 70, width: 1920, height: 1080, fps: 30, audio: "none", grain: 10, maxBitrateKbps: 8000, sceneChanges: [13, 27], seed: 7 }, ".tmp/bench");
  const narration = await cachedNarration({ sentences: [...SCRIPT, ...SCRIPT.slice(0, 4)], subtitleTrack: true, gapSeconds: 0.6, picture: picture.path, width: 1920, height: 1080 }, ".tmp/bench");
  const signal = new AbortController().signal;
  const source = await probeSource({ runner, path: narration.path, sizeBytes: (await stat(narration.path)).size, videoUrl: "https://bench.test/talk.mp4", platformTitle: null, maxSourceSeconds: 3600, signal });
  const track = await subtitleTrackCues(runner, source, path.join(work, "track.srt"), signal);
  if (!track.found) throw new Error(`the bench source has no subtitle track: ${track.note}`);
  const transcript = buildTranscript("subtitle_track", track.found.language, wordsFromCues(track.found.cues, source.durationSeconds));
  const start = 1;
  const end = Math.min(source.durationSeconds, start + 30);
  const config = ClipConfig.parse({ aspect_ratio: "9:16", resolution: quick ? 720 : 1080, min_clip_seconds: 15, max_clip_seconds: 60, captions: "burned", caption_style: "bold" });
  const size = outputSize(config, source);
  const captions = await prepareClipCaptions({ transcript, config, start, end, width: size.width, height: size.height, canBurn: true, file: (n) => path.join(work, n), index: 0 });
  if (!captions.assPath) throw new Error("no captions were prepared");
  const candidate = { start, end, score: 1, reasons: ["bench"] };
  const render = async (captioned: boolean, round: number): Promise<number> => {
    const began = performance.now();
    await renderClip(runner, {
      source,
      candidate,
      config,
      outPath: path.join(work, `clip-${captioned ? "captioned" : "plain"}-${round}.mp4`),
      thumbnailPath: path.join(work, `thumb-${round}.jpg`),
      signal,
      onProgress: () => undefined,
      captionsPath: captioned ? captions.assPath : null,
    });
    return (performance.now() - began) / 1000;
  };
  const filterOnly = async (captionedRun: boolean): Promise<number> => {
    const { ffmpegArgs } = buildClipArgs({ source, candidate, config, outPath: "-", captionsPath: captionedRun ? captions.assPath : null });
    const graph = ffmpegArgs[ffmpegArgs.indexOf("-filter_complex") + 1]!;
    const began = performance.now();
    const result = await runner.ffmpeg({
      args: ["-nostdin", "-v", "error", "-ss", start.toFixed(3), "-i", source.path, "-t", (end - start).toFixed(3), "-filter_complex", graph, "-map", "[clip]", "-f", "null", "-"],
      inputs: [source.path],
      outputs: [],
      timeoutMs: 20 * 60_000,
    });
    if (result.exitCode !== 0) throw new Error(result.stderrTail);
    return (performance.now() - began) / 1000;
  };
  const graphPlain: number[] = [];
  const graphCaptioned: number[] = [];
  for (let round = 0; round < ROUNDS + 1; round++) {
    graphPlain.push(await filterOnly(false));
    graphCaptioned.push(await filterOnly(true));
  }
  const libassSeconds = Math.min(...graphCaptioned) - Math.min(...graphPlain);
  console.log(`filter graph alone (no encode): plain ${graphPlain.map((s) => s.toFixed(1)).join(", ")} s; with ass ${graphCaptioned.map((s) => s.toFixed(1)).join(", ")} s; libass adds ${libassSeconds.toFixed(1)} s (best of each)`);
  const plain: number[] = [];
  const captioned: number[] = [];
  for (let round = 0; round < (process.env.BENCH_CAPTIONS_FILTER_ONLY === "1" ? 0 : ROUNDS); round++) {
    plain.push(await render(false, round));
    console.log(`  round ${round + 1}: plain ${plain.at(-1)!.toFixed(1)} s`);
    captioned.push(await render(true, round));
    console.log(`  round ${round + 1}: captioned ${captioned.at(-1)!.toFixed(1)} s`);
  }
  if (plain.length === 0) return;
  const bestPlain = Math.min(...plain);
  const bestCaptioned = Math.min(...captioned);
  const ratio = bestCaptioned / bestPlain;
  const hourUsd = 60 * WHISPER_USD_PER_MINUTE;
  const figures = {
    clip: `${size.width}x${size.height}, ${(end - start).toFixed(0)} s, bold captions (${captions.text?.split(" ").length ?? 0} words)`,
    plain_seconds: plain.map((s) => Math.round(s * 10) / 10),
    captioned_seconds: captioned.map((s) => Math.round(s * 10) / 10),
    best_ratio: Math.round(ratio * 1000) / 1000,
    filter_graph_plain_seconds: graphPlain.map((s) => Math.round(s * 10) / 10),
    filter_graph_captioned_seconds: graphCaptioned.map((s) => Math.round(s * 10) / 10),
    libass_added_seconds: Math.round(libassSeconds * 10) / 10,
    ratio_if_libass_adds_its_filter_time: Math.round(((bestPlain + libassSeconds) / bestPlain) * 1000) / 1000,
    target_ratio: 1.1,
    workers_ai_usd_per_transcribed_hour: Math.round(hourUsd * 10000) / 10000,
  };
  console.log(`\nrender of ${figures.clip}`);
  console.log(`  without captions: best ${bestPlain.toFixed(1)} s  (${figures.plain_seconds.join(", ")})`);
  console.log(`  with captions:    best ${bestCaptioned.toFixed(1)} s  (${figures.captioned_seconds.join(", ")})`);
  console.log(`  ratio: ${ratio.toFixed(3)}x (target <= 1.10x); libass alone: ${libassSeconds.toFixed(1)} s, i.e. ${((bestPlain + libassSeconds) / bestPlain).toFixed(3)}x of the plain render`);
  console.log(`Workers AI speech-to-text: 60 min x $${WHISPER_USD_PER_MINUTE}/min = $${hourUsd.toFixed(4)} per transcribed hour (less when only speech is sent)`);
  await mkdir(path.resolve("bench", "results"), { recursive: true });
  await writeFile(path.resolve("bench", "results", `captions-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), JSON.stringify(figures, null, 2));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
