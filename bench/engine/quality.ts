/**
 * `npm run bench:quality [-- --minutes 90]`: the clip-quality suite at full
 * size. The conversations of container/test/analyse/clip-quality.test.ts
 * with the long show at 90 minutes (or --minutes), every speech-led type on
 * every case, and the source without speech on every type. Each analysis is
 * judged as it comes out (no transcript) and, with a subtitle track, after
 * the job's sentence snapping: edges inside a sentence of any speaker or a
 * laugh, highlights inside a clip, the worst overlap between two clips, clips
 * reaching into the music intro or outro, false pause_bounded claims.
 *
 * Prints one row per case, type and transcript with the analysis's wall time,
 * its CPU time (this process and the ffmpeg runs it started) and realtime
 * factor, and the load average at start and end (the machine is shared);
 * writes bench/results/quality-<time>.json. Exits 1 when any rule is broken.
 * Generated media are cached in .tmp/media.
 */
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ClipConfig, VIDEO_TYPES, type VideoType } from "#contract";
import { cachedConversation } from "../../test/media/conversation.ts";
import { cachedSpeechSource } from "../../test/media/speech.ts";
import {
  analysedClips,
  figuresLine,
  judgeClips,
  NO_SPEECH_VLOG,
  probeFile,
  qualityCases,
  trackTranscript,
  withTranscript,
  type Judgement,
} from "../../container/test/helpers/clip-quality.ts";
import { nativeRunner } from "../../container/test/helpers/media.ts";
import { PROJECT_ROOT } from "../../scripts/local-stack/paths.ts";
import { processTreeCpuSeconds } from "./cpu.ts";

const runner = nativeRunner();
const minutesArg = process.argv.indexOf("--minutes");
const longMinutes = minutesArg > 0 ? Number(process.argv[minutesArg + 1]) : 90;
if (!Number.isFinite(longMinutes) || longMinutes < 1) throw new Error("--minutes takes a number of minutes");
const SPEECH_TYPES: VideoType[] = ["podcast", "general", "vlog", "lecture"];

const cpu = () => processTreeCpuSeconds(process.pid);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
const broken = (j: Judgement) =>
  j.clips === 0 || j.edgesInSpeech.length > 0 || j.highlightsCovered < j.highlights || j.worstOverlap > 0.5 || j.musicInside.length > 0 || j.falsePauseClaims > 0;

async function main(): Promise<void> {
  const loadAtStart = load();
  console.log(`bench:quality: long show ${longMinutes} min; load average at start ${loadAtStart} (${os.cpus().length} cores)`);
  const rows: Record<string, string | number>[] = [];
  const problems: string[] = [];
  for (const c of qualityCases({ longMinutes, types: SPEECH_TYPES })) {
    const madeAt = Date.now();
    const conversation = await cachedConversation(c.spec);
    console.log(`${c.name}: ${c.about}; ${(conversation.durationSeconds / 60).toFixed(1)} min, ${conversation.sentences.length} sentences, ${conversation.overlaps} overlaps (made or found in ${((Date.now() - madeAt) / 1000).toFixed(1)} s)`);
    const source = await probeFile(runner, conversation.path);
    const transcript = c.spec.subtitleTrack ? await trackTranscript(runner, source, path.join(PROJECT_ROOT, ".tmp", `quality-${c.name}.srt`)) : null;
    const config = ClipConfig.parse(c.config);
    for (const type of c.types) {
      const wallAt = Date.now();
      const cpuAt = cpu();
      const analysed = await analysedClips(runner, source, type, config);
      const wall = (Date.now() - wallAt) / 1000;
      const used = cpu() - cpuAt;
      const timing = { "wall s": wall.toFixed(1), "cpu s": used.toFixed(1), "x realtime (wall)": (source.durationSeconds / wall).toFixed(0) };
      const judgements: [string, Judgement][] = [["none", judgeClips(conversation, analysed.clips)]];
      if (transcript) judgements.push(["track", judgeClips(conversation, withTranscript(analysed, type, config, transcript, source.durationSeconds))]);
      for (const [kind, j] of judgements) {
        rows.push({ ...figuresLine(c.name, type, kind, j), ...timing });
        if (broken(j)) problems.push(`${c.name} ${type} (${kind}): ${[...j.edgesInSpeech, ...j.musicInside].join("; ") || JSON.stringify(figuresLine(c.name, type, kind, j))}`);
      }
    }
  }

  const source = await probeFile(runner, (await cachedSpeechSource(NO_SPEECH_VLOG)).path);
  for (const type of VIDEO_TYPES) {
    const needsSpeech = type === "podcast" || type === "lecture";
    try {
      const { clips } = await analysedClips(runner, source, type, ClipConfig.parse({ min_clip_seconds: 10, max_clip_seconds: 30, max_clips: 3 }));
      rows.push({ case: "no speech", type, transcript: "none", clips: clips.length, reasons: [...new Set(clips.flatMap((c) => c.reasons))].join(" ") });
      if (needsSpeech || clips.length === 0) problems.push(`no speech ${type}: ${clips.length} clips`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      rows.push({ case: "no speech", type, transcript: "none", clips: 0, reasons: message.slice(0, 70) });
      if (!needsSpeech) problems.push(`no speech ${type}: ${message}`);
    }
  }

  console.table(rows);
  const loadAtEnd = load();
  console.log(`load average at end ${loadAtEnd}`);
  const dir = path.join(PROJECT_ROOT, "bench", "results");
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `quality-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  await writeFile(file, JSON.stringify({ longMinutes, loadAtStart, loadAtEnd, rows, problems }, null, 2));
  console.log(`wrote ${path.relative(PROJECT_ROOT, file)}`);
  if (problems.length > 0) {
    console.log(`rules broken:\n  ${problems.join("\n  ")}`);
    process.exitCode = 1;
  } else {
    console.log("every rule held on every case");
  }
}

await main();
