/**
 * The cost of each steering feature, measured side by side in
 * one run on generated espeak-ng speech (three topics, fillers, 0.8 s pauses,
 * repeated to about three and a half minutes), CPU beside wall time:
 *
 *   time_range  the analysis of the whole source vs of a third of it (the
 *               passes seek: they decode only the range);
 *   prompt      matching a prompt by words (BM25) over the transcript, and
 *               choosing its clips;
 *   removal     one 30 s 720x720 clip rendered plain vs with remove_silence
 *               tight + remove_fillers: the same single ffmpeg run (the
 *               bench counts the runs), its extra CPU and wall time.
 *
 *   npm run bench:steering [-- --repeat N]   (N renders each, default 2)
 */
import { stat } from "node:fs/promises";
import { ClipConfig, type Transcript } from "#contract";
import { analyse } from "../../container/src/analyse/index.ts";
import type { ScoredWindow } from "../../container/src/analyse/select.ts";
import { createNativeRunner } from "../../container/src/ffmpeg/native.ts";
import { probeSource } from "../../container/src/source/probe.ts";
import { planReframe } from "../../container/src/reframe/plan.ts";
import { renderClip } from "../../container/src/render/index.ts";
import { outputSize } from "../../container/src/render/geometry.ts";
import { promptClips } from "../../container/src/steer/prompt.ts";
import { planRemovals } from "../../container/src/steer/removals.ts";
import { windowedSource } from "../../container/src/steer/time-range.ts";
import { buildTranscript, wordsFromCues } from "../../container/src/transcript/build.ts";
import { cachedNarration } from "../../test/media/narration.ts";
import { exitedChildrenCpuSeconds } from "./cpu.ts";

const BLOCKS = [
  ["Our pricing starts at ten dollars a month.", "The basic plan includes five projects.", "Teams can choose the yearly subscription instead.", "Um.", "Every invoice lists the discount you received."],
  ["Last weekend we hiked the northern ridge trail.", "The mountain path was steep and rocky.", "Um.", "Good boots matter more than anything else.", "We watched the sunrise from the summit."],
  ["Tonight I am cooking a simple pasta recipe.", "Um.", "First we slice garlic and warm the olive oil.", "The sauce should simmer for twenty minutes.", "Taste the dish and add pepper at the end."],
];
const repeatArg = process.argv.indexOf("--repeat");
const REPEAT = repeatArg > 0 ? Math.max(1, Number(process.argv[repeatArg + 1]) || 2) : 2;

async function measure<T>(run: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const cpu0 = exitedChildrenCpuSeconds() + process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6;
  const t0 = performance.now();
  const value = await run();
  const wall = (performance.now() - t0) / 1000;
  const cpu = exitedChildrenCpuSeconds() + process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 - cpu0;
  return { value, wall, cpu };
}

function stamp(t: number): string {
  const ms = Math.round(t * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)},${p(ms % 1000, 3)}`;
}

async function main(): Promise<void> {
  const sentences = Array.from({ length: 4 }, () => BLOCKS.flat()).flat();
  const narration = await cachedNarration({ sentences, subtitleTrack: true, gapSeconds: 0.8, width: 1280, height: 720 });
  const runner = createNativeRunner({ ffmpegPath: process.env.FFMPEG_PATH || "ffmpeg", ffprobePath: process.env.FFPROBE_PATH || "ffprobe" });
  const signal = new AbortController().signal;
  const source = await probeSource({ runner, path: narration.path, sizeBytes: (await stat(narration.path)).size, videoUrl: "https://example.com/b.mp4", platformTitle: null, maxSourceSeconds: 3600, signal });
  const config = ClipConfig.parse({ aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 10, max_clip_seconds: 30, max_clips: 3, captions: "off" });
  const rows: string[] = [];
  const load = (await import("node:os")).loadavg().map((l) => l.toFixed(1)).join(" ");
  console.log(`source ${narration.durationSeconds.toFixed(1)} s, ${sentences.length} sentences; load average ${load}`);

  // time_range: the whole source vs its middle third.
  let windows: ScoredWindow[] = [];
  const whole = await measure(() => analyse(runner, source, "podcast", config, { signal, onProgress: () => undefined, speech: null, onWindows: (w) => (windows = w) }));
  const third = narration.durationSeconds / 3;
  const ranged = await measure(() => analyse(runner, windowedSource(source, { start: third, end: 2 * third }), "podcast", config, { signal, onProgress: () => undefined, speech: null }));
  rows.push(`analysis, whole source      wall ${whole.wall.toFixed(2)} s  cpu ${whole.cpu.toFixed(2)} s`);
  rows.push(`analysis, time_range 1/3    wall ${ranged.wall.toFixed(2)} s  cpu ${ranged.cpu.toFixed(2)} s  (ratio ${(ranged.cpu / whole.cpu).toFixed(2)} cpu)`);

  // prompt: by words over the whole transcript.
  const srt = narration.sentences.map((s, i) => `${i + 1}\n${stamp(s.start)} --> ${stamp(s.end)}\n${s.text}`).join("\n\n");
  const { parseCaptions } = await import("../../container/src/transcript/cues.ts");
  const transcript: Transcript = buildTranscript("subtitle_track", "en", wordsFromCues(parseCaptions(srt).cues, narration.durationSeconds));
  const matched = await measure(() =>
    promptClips(
      { prompt: "pricing and subscription plans", transcript, limits: { min: 10, max: 30, from: 0, to: narration.durationSeconds }, maxClips: 3, windows, reporter: { similarity: async () => ({ kind: "unavailable" as const }) }, jobId: "bench" },
      () => undefined,
    ),
  );
  rows.push(`prompt by words (BM25)      wall ${(matched.wall * 1000).toFixed(1)} ms cpu ${(matched.cpu * 1000).toFixed(1)} ms for ${transcript.sentences.length} sentences, ${matched.value.candidates.length} clips`);

  // removal: one clip plain vs cut, same render call; ffmpeg runs counted.
  const clip = { start: narration.sentences[0]!.start - 0.25, end: narration.sentences[0]!.start - 0.25 + 30, score: 1, reasons: ["bench"] };
  const pauses: { start: number; end: number }[] = [];
  for (let i = 1; i < narration.sentences.length; i++) pauses.push({ start: narration.sentences[i - 1]!.end, end: narration.sentences[i]!.start });
  const removal = planRemovals({ start: clip.start, end: clip.end, silence: "tight", fillers: true, pauses, words: transcript.words });
  const size = outputSize(config, source);
  const plan = await planReframe({ runner, source, candidate: clip, config, output: size, rawPath: "/tmp/steering-bench-faces.rgb", signal, onProgress: () => undefined });
  let runs = 0;
  const counting = { ...runner, ffmpeg: (req: Parameters<typeof runner.ffmpeg>[0]) => (runs++, runner.ffmpeg(req)) };
  const plain: number[][] = [];
  const cut: number[][] = [];
  for (let r = 0; r < REPEAT; r++) {
    for (const [kept, out] of [[undefined, plain], [removal.kept, cut]] as const) {
      const before = runs;
      const m = await measure(() => renderClip(counting, { source, candidate: clip, config, outPath: `/tmp/steering-bench-${r}.mp4`, thumbnailPath: `/tmp/steering-bench-${r}.jpg`, signal, onProgress: () => undefined, plan, kept }));
      out.push([m.wall, m.cpu, runs - before]);
    }
  }
  const best = (xs: number[][], k: number) => Math.min(...xs.map((x) => x[k]!));
  rows.push(`render 30 s clip, plain     wall ${best(plain, 0).toFixed(2)} s  cpu ${best(plain, 1).toFixed(2)} s  ffmpeg runs ${plain[0]![2]} (clip + thumbnail)`);
  rows.push(`render, tight + fillers     wall ${best(cut, 0).toFixed(2)} s  cpu ${best(cut, 1).toFixed(2)} s  ffmpeg runs ${cut[0]![2]}; ${removal.removed.length} cuts, ${(removal.kept.reduce((s, k) => s + k.end - k.start, 0)).toFixed(1)} s kept`);
  rows.push(`render ratio cut/plain      cpu ${(best(cut, 1) / best(plain, 1)).toFixed(2)}  wall ${(best(cut, 0) / best(plain, 0)).toFixed(2)}  (best of ${REPEAT}; the cut clip is shorter)`);
  console.log(rows.join("\n"));
}

await main();
