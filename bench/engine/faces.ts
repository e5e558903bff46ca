/**
 * `npm run bench:faces`: what face reframing costs and how well it frames,
 * measured in one run.
 *
 * Sources (composed from the photographs shipped in @vladmandic/face-api,
 * generated into .tmp/bench-faces and kept there between runs):
 * - walk: 60 s 1280x720, one person walking to and fro, a larger, faster
 *   orange block as a distractor, a tone for audio;
 * - talk: about 60 s 1280x720, two people far apart taking turns, each mouth
 *   opening and closing with its own espeak-ng voice, with quick exchanges;
 * - drift: 40 s 1920x1080, the issue's case: a face about 1/8 of the width,
 *   head tilted, in a coloured border, drifting slowly left to right past the
 *   distractor, over speech;
 * - pair: 30 s 1920x1080, two still faces far apart (the issue's split case).
 *
 * Cost: for walk and talk, the job steps the engine runs (probe, analysis,
 * then per clip: face plan and render), in this process, for reframe=faces,
 * reframe=fit and reframe=center, side by side: 9:16 1080x1920, two clips of
 * 20-30 s (the ratios faces/center and fit/center, wall and CPU), in
 * BENCH_ROUNDS rounds (default 3) that turn the jobs' order, each kind's
 * figures taken from its median round.
 * Wall and CPU time (this process and the ffmpeg it ran) per step; the share
 * detection (sampling + tracking) takes of the faces job; frames tracked per
 * second of wall and of CPU time.
 *
 * Where the faces job's extra over center goes, on a source with one person
 * (walk): its detection, and its renders over center's in the same round,
 * split by rendering the faces job's clips again, after its clock stopped,
 * with the camera's path mirrored (the camera's motion without the person)
 * and with a camera that re-frames in steps (cameraVariants).
 *
 * Framing, judged from rendered clips (720x1280) by the known face positions
 * (output frames sampled twice a second), printed as one line of held shares
 * (the share of judged time the crop holds the right subject) per source:
 * walk, the face inside the crop while it is visible; drift, the face inside the crop;
 * pair, both faces one per half (layout split); talk, the speaking face
 * framed from 1 s after each turn starts (turns of at least the minimum shot),
 * per turn and as a share of the turns' time.
 *
 * Before: the engine's earlier face reframing, per-frame detection without
 * tracking or speaker (main at BEFORE_COMMIT, taken from git into WORK) plans the same clips in the same
 * run: its detection's wall and CPU time beside today's (the first round's
 * faces job, `faces_round_1_with_before`), and on drift, the
 * share of judged times its camera path held the face (read from the path,
 * as it rendered no split and no speaker). Skipped, with a message, where
 * git has no such commit (a shallow clone).
 *
 * Writes the figures to bench/results/faces-<time>.json.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ClipConfig } from "#contract";
import { analyse } from "../../container/src/analyse/index.ts";
import { probeSource } from "../../container/src/source/probe.ts";
import { faceApi } from "../../container/src/reframe/detector.ts";
import { pathAt, type CameraPath, type PathSegment } from "../../container/src/reframe/path.ts";
import { planReframe, windowFractions, type Framing, type ReframePlan } from "../../container/src/reframe/plan.ts";
import { MIN_SHOT_SECONDS } from "../../container/src/reframe/speaker.ts";
import { renderClip } from "../../container/src/render/index.ts";
import { outputSize } from "../../container/src/render/geometry.ts";
import type { Candidate, SourceInfo } from "../../container/src/shared/types.ts";
import { cameraTrack, decodeFrames, framedTurns, heldShare, insideWindow, splitFrames } from "../../container/test/helpers/faces-judge.ts";
import { compose, conversation, faceBoxAt, PEOPLE, type Composition, type Placement, type Turn } from "../../container/test/helpers/faces-media.ts";
import { nativeRunner } from "../../container/test/helpers/media.ts";
import { PROJECT_ROOT } from "../../scripts/local-stack/paths.ts";
import { processTreeCpuSeconds } from "./cpu.ts";

const WORK = path.join(PROJECT_ROOT, ".tmp", "bench-faces");
/** Bump when a source's recipe changes, so cached sources are made again. */
const SOURCES_VERSION = 2;
const COST_CONFIG = { aspect_ratio: "9:16", resolution: 1080, min_clip_seconds: 20, max_clip_seconds: 30, max_clips: 2, captions: "off" } as const;
/** Rounds of the cost jobs (BENCH_ROUNDS; at least 1). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3) || 3);
const REFRAMES = ["faces", "center", "fit"] as const;
type Reframe = (typeof REFRAMES)[number];
const runner = nativeRunner();
const signal = new AbortController().signal;

function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Wall seconds and CPU seconds (this process and its exited children) of `fn`. */
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const cpu = processTreeCpuSeconds(process.pid);
  const wall = performance.now();
  const value = await fn();
  return { value, wall: (performance.now() - wall) / 1000, cpu: processTreeCpuSeconds(process.pid) - cpu };
}

interface Made {
  path: string;
  width: number;
  height: number;
  people: Placement[];
  turns: Turn[];
}

/** A source composed once into WORK (with what the judges need to know about it beside it). */
async function made(name: string, recipe: () => Promise<{ composition: Composition; turns: Turn[] }>): Promise<Made> {
  const file = path.join(WORK, `${name}-v${SOURCES_VERSION}.mp4`);
  if (existsSync(file) && existsSync(`${file}.json`)) {
    const known = JSON.parse(await readFile(`${file}.json`, "utf8")) as Omit<Made, "people"> & { people: (Omit<Placement, "person" | "mouth"> & { person: keyof typeof PEOPLE })[] };
    return { ...known, people: known.people.map((p) => ({ ...p, person: PEOPLE[p.person] })) };
  }
  console.log(`bench:faces: composing ${name}...`);
  const { composition, turns } = await recipe();
  await compose(file, composition);
  const names = Object.entries(PEOPLE);
  const people = composition.people.map(({ mouth: _mouth, ...p }) => ({ ...p, person: names.find(([, v]) => v === p.person)![0] }));
  await writeFile(`${file}.json`, JSON.stringify({ path: file, width: composition.width, height: composition.height, turns, people }));
  return { path: file, width: composition.width, height: composition.height, people: composition.people, turns };
}

async function probe(file: string): Promise<SourceInfo> {
  return probeSource({ runner, path: file, sizeBytes: (await stat(file)).size, videoUrl: "https://bench.test/source.mp4", platformTitle: null, maxSourceSeconds: 3600, signal });
}

const LINES = [
  "Welcome back to the show, it is good to have you here.",
  "Thank you, I am very glad to be here with you today.",
  "Tell me how the whole project started for you and the team.",
  "It began with a small idea, a garage, and a lot of coffee.",
  "That sounds like a story worth telling from the beginning.",
  "We built the first version in a single long weekend.",
  "Really?",
  "Yes.",
  "In one weekend?",
  "Every line of it.",
  "What was the hardest part of those first months?",
  "Finding people who believed in it as much as we did.",
  "And how did you find them in the end, if you did?",
  "Mostly by showing the thing working, again and again.",
  "What would you tell someone starting out this year?",
  "Start small, ship early, and listen to your first users.",
  "That is good advice for almost anything, I think.",
  "It is, and it took me far too long to learn it myself.",
  "Where do you see all of this going next spring?",
  "A bigger launch, a bigger team, and hopefully less coffee.",
];

type SourceName = "walk" | "talk" | "drift" | "pair";

/** Each source's recipe, composed when first asked for (so the cost figures of one come before the next is composed). */
function sources(): Record<SourceName, () => Promise<Made>> {
  const walk = (): Promise<Made> => made("walk-60s", async () => ({
    turns: [],
    composition: {
      seconds: 60, width: 1280, height: 720, fps: 30, distractor: true,
      people: [{ person: PEOPLE.anna, width: 260, path: [[0, 60, 220], [12, 960, 260], [20, 960, 260], [34, 100, 240], [45, 100, 240], [60, 700, 220]], hidden: [40, 41] }],
    },
  }));
  const talk = (): Promise<Made> => made("talk-60s", async () => {
    const spoken = await conversation(LINES.map((text, i) => ({ speaker: i % 2, text })), ["en-us", "en-gb+f3"], { fps: 30, gap: 0.7, lead: 1, tail: 1 });
    return {
      turns: spoken.turns,
      composition: {
        seconds: spoken.seconds, width: 1280, height: 720, fps: 30, audio: spoken.audio,
        people: [
          { person: PEOPLE.bea, width: 300, path: [[0, 80, 220]], mouth: spoken.mouths[0] },
          { person: PEOPLE.cara, width: 300, path: [[0, 900, 230]], mouth: spoken.mouths[1] },
        ],
      },
    };
  });
  const drift = (): Promise<Made> => made("drift-40s", async () => {
    const spoken = await conversation(LINES.slice(0, 12).map((text) => ({ speaker: 0, text })), ["en-us"], { fps: 25, gap: 0.8, lead: 1, tail: 1 });
    // A face 1/8 of the width: bea's face is about half her cut-out.
    return {
      turns: [],
      composition: {
        seconds: 40, width: 1920, height: 1080, fps: 25, distractor: true, audio: spoken.audio.subarray(0, 40 * 22050),
        people: [{ person: PEOPLE.bea, width: 480, path: [[0, 60, 300], [40, 1300, 360]], rotate: 12, border: { color: "0x20a0ff", size: 14 } }],
      },
    };
  });
  const pair = (): Promise<Made> => made("pair-30s", async () => ({
    turns: [],
    composition: {
      seconds: 30, width: 1920, height: 1080, fps: 25,
      people: [
        { person: PEOPLE.bea, width: 420, path: [[0, 80, 300]], border: { color: "0xe0c020", size: 14 } },
        { person: PEOPLE.cara, width: 420, path: [[0, 1400, 320]], rotate: -10, border: { color: "0x20c060", size: 14 } },
      ],
    },
  }));
  return { walk, talk, drift, pair };
}

/** The earlier reframing: face detection every sampled frame, no tracking, no speaker. */
const BEFORE_COMMIT = "2bd03666802755995449da3aac24cc68c2c9ef4a";
/** The old plan's paths have today's shape (path.ts did not change in kind). */
type BeforePath = PathSegment;
interface Before {
  planReframe(args: { runner: typeof runner; source: SourceInfo; candidate: Candidate; config: ClipConfig; output: { width: number; height: number }; rawPath: string; signal: AbortSignal; onProgress: (f: number) => void }): Promise<{ used: string; facesCount: number; views: BeforePath[][] }>;
  pathAt(path: BeforePath[], t: number): { x: number; y: number };
  faceApi(): Promise<unknown>;
}

/** The reframe modules as they were at BEFORE_COMMIT (the engine's sources from git, beside today's node_modules), or null. */
async function before(): Promise<Before | null> {
  const dir = path.join(WORK, `before-${BEFORE_COMMIT.slice(0, 10)}`);
  if (!existsSync(path.join(dir, "container", "src", "reframe", "plan.ts"))) {
    try {
      await mkdir(dir, { recursive: true });
      execFileSync("sh", ["-c", `git archive ${BEFORE_COMMIT} container/src | tar -x -C '${dir}'`], { cwd: PROJECT_ROOT, stdio: ["ignore", "ignore", "pipe"] });
    } catch (error) {
      console.log(`bench:faces: no "before" figures (git archive ${BEFORE_COMMIT.slice(0, 10)} failed: ${String(error).split("\n")[0]})`);
      return null;
    }
  }
  const plan = (await import(pathToFileURL(path.join(dir, "container", "src", "reframe", "plan.ts")).href)) as Pick<Before, "planReframe">;
  const paths = (await import(pathToFileURL(path.join(dir, "container", "src", "reframe", "path.ts")).href)) as Pick<Before, "pathAt">;
  const detector = (await import(pathToFileURL(path.join(dir, "container", "src", "reframe", "detector.ts")).href)) as Pick<Before, "faceApi">;
  return { planReframe: plan.planReframe, pathAt: paths.pathAt, faceApi: detector.faceApi };
}

/** The item whose `value` is the median (the lower middle one of an even count). */
function median<T>(items: T[], value: (item: T) => number): T {
  return [...items].sort((a, b) => value(a) - value(b))[Math.floor((items.length - 1) / 2)]!;
}

/** The run whose CPU time is the median of the runs. */
function medianRun(runs: Record<string, unknown>[]): Record<string, unknown> {
  return median(runs, (run) => Number(run.job_cpu_s));
}

/** The faces job's render cost is broken down (cameraVariants) on sources with one person: the mirrored path then shows the side they are not on. */
function breaksDownRenders(source: Made): boolean {
  return source.people.length === 1;
}

/** A re-framing camera's hold: it stays put while the followed centre is within half this much of the frame's width of it. */
const STEP_HOLD = 0.14;
/** ... then pans (eased in and out) for this long to a point ahead of the subject. */
const STEP_PAN_SECONDS = 1;

/**
 * Two cameras the engine does not use, over the faces plan's clips, to tell apart what the faces render's extra
 * over the centre crop's is made of:
 * - `mirrored`: the plan's path mirrored about the frame's middle (x to 1 - x): the same camera motion, over the
 *   side of the picture the subject is not on;
 * - `stepped`: a camera that holds still while the subject (the plan's own path, which follows it) stays within
 *   STEP_HOLD of the frame's width, then pans in STEP_PAN_SECONDS to a point ahead of it: the same subject in
 *   the picture with the camera still most of the time. Only its cost is measured, not its framing.
 */
function cameraVariants(views: Framing, seconds: number, window: number): { mirrored: Framing; stepped: Framing } {
  const mirror = (p: CameraPath): CameraPath => p.map((s) => ({ ...s, x0: 1 - s.x0, x1: 1 - s.x1 }));
  const mirrored: Framing = { ...views, single: mirror(views.single), ...(views.split ? { split: { ...views.split, top: mirror(views.split.top), bottom: mirror(views.split.bottom) } } : {}) };
  const step = 1 / 15;
  const points: { t: number; x: number; y: number }[] = [];
  let held = pathAt(views.single, 0);
  for (let t = 0; t < seconds; ) {
    const now = pathAt(views.single, t);
    // Where the plan cuts (the path jumps further in a step than the camera pans in a second), this camera cuts too.
    if (t > 0 && Math.abs(now.x - pathAt(views.single, t - step).x) > window) held = now;
    if (Math.abs(now.x - held.x) <= STEP_HOLD / 2) {
      points.push({ t, ...held });
      t += step;
      continue;
    }
    const ahead = pathAt(views.single, t + STEP_PAN_SECONDS);
    const to = { x: Math.min(1 - window / 2, Math.max(window / 2, ahead.x + Math.sign(now.x - held.x) * STEP_HOLD * 0.4)), y: ahead.y };
    for (let i = 0; i < STEP_PAN_SECONDS / step; i++) {
      const f = (i * step) / STEP_PAN_SECONDS;
      const eased = f * f * (3 - 2 * f);
      points.push({ t: t + i * step, x: held.x + (to.x - held.x) * eased, y: held.y + (to.y - held.y) * eased });
    }
    held = to;
    t += STEP_PAN_SECONDS;
  }
  points.push({ t: seconds, ...held });
  const single: CameraPath = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    const last = single.at(-1);
    // A hold is one piece.
    if (last && a.x === b.x && a.y === b.y && last.x0 === last.x1 && last.y0 === last.y1 && last.x1 === a.x && last.y1 === a.y) last.to = b.t;
    else single.push({ from: a.t, to: b.t, x0: a.x, x1: b.x, y0: a.y, y1: b.y });
  }
  single.at(-1)!.to = Number.POSITIVE_INFINITY;
  return { mirrored, stepped: { ...views, single } };
}

/** One job's steps as the engine runs them, measured. */
async function costJob(source: Made, reframe: "faces" | "center" | "fit", old: Before | null = null): Promise<Record<string, unknown>> {
  const config = ClipConfig.parse({ ...COST_CONFIG, reframe });
  const job = await measured(async () => {
    const info = await probe(source.path);
    let speech: { start: number; end: number }[] | null = null;
    const analysis = await measured(() => analyse(runner, info, "vlog", config, { signal, onProgress: () => {}, onSpeech: (spans) => (speech = spans) }));
    const clips: Record<string, unknown>[] = [];
    const plans: ReframePlan[] = [];
    for (const [index, candidate] of analysis.value.slice(0, config.max_clips).entries()) {
      const plan = await measured(() => planReframe({ runner, source: info, candidate, config, output: outputSize(config, info), speech, rawPath: path.join(WORK, `${reframe}-${index}.rgb`), signal, onProgress: () => {} }));
      const render = await measured(() =>
        renderClip(runner, { source: info, candidate, config, outPath: path.join(WORK, `cost-${reframe}-${index}.mp4`), thumbnailPath: path.join(WORK, `cost-${reframe}-${index}.jpg`), signal, onProgress: () => {}, plan: plan.value }),
      );
      plans.push(plan.value);
      clips.push({
        clip_s: round(candidate.end - candidate.start),
        reframe: plan.value.used,
        faces: plan.value.facesCount,
        frames: plan.value.frames,
        looks: plan.value.looks,
        detection_wall_s: round(plan.wall, 2),
        detection_cpu_s: round(plan.cpu, 2),
        render_wall_s: round(render.wall),
        render_cpu_s: round(render.cpu),
      });
    }
    return { analysis, clips, info, plans, candidates: analysis.value.slice(0, config.max_clips) };
  });
  const clips = job.value.clips;
  if (reframe === "faces" && breaksDownRenders(source)) {
    // Where the faces render's extra goes, after the job's clock stopped: the same clips rendered with the camera's
    // path mirrored and re-framing in steps (cameraVariants).
    const { info } = job.value;
    const output = outputSize(config, info);
    const window = windowFractions(output.width / output.height, info.width, info.height).width;
    for (const [index, candidate] of job.value.candidates.entries()) {
      const plan = job.value.plans[index]!;
      for (const [name, views] of Object.entries(cameraVariants(plan.views, candidate.end - candidate.start, window))) {
        const render = await measured(() =>
          renderClip(runner, { source: info, candidate, config, outPath: path.join(WORK, `cost-${name}-${index}.mp4`), thumbnailPath: path.join(WORK, `cost-${name}-${index}.jpg`), signal, onProgress: () => {}, plan: { ...plan, views } }),
        );
        clips[index]![`${name}_render_cpu_s`] = round(render.cpu);
      }
    }
  }
  if (old && reframe === "faces") {
    // The same clips planned by the earlier reframing, after the job's clock stopped (not rendered: only detection's cost is compared).
    for (const [index, candidate] of job.value.candidates.entries()) {
      const { info } = job.value;
      const previous = await measured(() => old.planReframe({ runner, source: info, candidate, config, output: outputSize(config, info), rawPath: path.join(WORK, `before-${index}.rgb`), signal, onProgress: () => {} }));
      Object.assign(clips[index]!, { before_faces: previous.value.facesCount, before_detection_wall_s: round(previous.wall, 2), before_detection_cpu_s: round(previous.cpu, 2) });
    }
  }
  const sum = (key: string) => clips.reduce((s, c) => s + Number(c[key]), 0);
  const frames = sum("frames");
  return {
    reframe,
    job_wall_s: round(job.wall),
    job_cpu_s: round(job.cpu),
    analysis_wall_s: round(job.value.analysis.wall),
    detection_wall_s: round(sum("detection_wall_s"), 2),
    detection_cpu_s: round(sum("detection_cpu_s"), 2),
    detection_share_wall: round(sum("detection_wall_s") / job.wall, 3),
    detection_share_cpu: round(sum("detection_cpu_s") / job.cpu, 3),
    frames_per_wall_s: frames > 0 ? round(frames / sum("detection_wall_s")) : 0,
    frames_per_cpu_s: frames > 0 ? round(frames / sum("detection_cpu_s")) : 0,
    ...(old && reframe === "faces"
      ? {
          before_detection_wall_s: round(sum("before_detection_wall_s"), 2),
          before_detection_cpu_s: round(sum("before_detection_cpu_s"), 2),
          detection_vs_before_cpu: round(sum("detection_cpu_s") / sum("before_detection_cpu_s"), 3),
          detection_vs_before_wall: round(sum("detection_wall_s") / sum("before_detection_wall_s"), 3),
          // Today's job with the old detection in place of the new (the renders of the two differ little): an estimate, not a run.
          before_detection_share_cpu_est: round(sum("before_detection_cpu_s") / (job.cpu - sum("detection_cpu_s") + sum("before_detection_cpu_s")), 3),
        }
      : {}),
    clips,
  };
}

function whole(info: SourceInfo): Candidate {
  return { start: 0, end: info.durationSeconds, score: 1, reasons: ["bench"], crop: [{ fromSeconds: 0, toSeconds: info.durationSeconds, centerX: 0.5, centerY: 0.5 }] };
}

/** Plans and renders the whole source at 720x1280 and decodes the output twice a second at 180x320. */
async function rendered(source: Made, name: string, layout: "single" | "split", speech: boolean): Promise<{ plan: ReframePlan; out: Awaited<ReturnType<typeof decodeFrames>> }> {
  const info = await probe(source.path);
  const config = ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 180, reframe: "faces", layout, captions: "off" });
  let spans: { start: number; end: number }[] | null = null;
  if (speech) await analyse(runner, info, "vlog", config, { signal, onProgress: () => {}, onSpeech: (s) => (spans = s) });
  const plan = await planReframe({ runner, source: info, candidate: whole(info), config, output: outputSize(config, info), speech: spans, rawPath: path.join(WORK, `${name}.rgb`), signal, onProgress: () => {} });
  const file = path.join(WORK, `judge-${name}.mp4`);
  await renderClip(runner, { source: info, candidate: whole(info), config, outPath: file, thumbnailPath: path.join(WORK, `judge-${name}.jpg`), signal, onProgress: () => {}, plan });
  return { plan, out: await decodeFrames(file, 2, 180, 320) };
}

async function framing(all: Record<SourceName, Made>, old: Before | null): Promise<Record<string, unknown>> {
  const single = (s: Made) => windowFractions(9 / 16, s.width, s.height).width;
  const half = (s: Made) => windowFractions(180 / 160, s.width, s.height).width;

  const drift = await rendered(all.drift, "drift", "single", true);
  const driftCamera = await cameraTrack(all.drift, drift.out, single(all.drift));
  const driftHeld = heldShare(all.drift.people[0]!, drift.out, driftCamera, single(all.drift), all.drift.width);
  let heldBefore: number | undefined;
  if (old) {
    // Before: the old plan's camera path at the same judged times (what its crop expression rendered).
    const info = await probe(all.drift.path);
    const config = ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 180, reframe: "faces", captions: "off" });
    const plan = await old.planReframe({ runner, source: info, candidate: whole(info), config, output: outputSize(config, info), rawPath: path.join(WORK, "before-drift.rgb"), signal, onProgress: () => {} });
    const times = drift.out.times;
    heldBefore = times.filter((t) => insideWindow(faceBoxAt(all.drift.people[0]!, t), old.pathAt(plan.views[0]!, t).x, single(all.drift), all.drift.width)).length / times.length;
  }

  const pair = await rendered(all.pair, "pair", "split", false);
  const split = splitFrames(pair.out);
  const top = await cameraTrack(all.pair, pair.out, half(all.pair), 0, 160);
  const bottom = await cameraTrack(all.pair, pair.out, half(all.pair), 160, 160);
  const both = pair.out.times.filter((_, i) =>
    split[i] &&
    heldShare(all.pair.people[0]!, { ...pair.out, times: [pair.out.times[i]!], frames: [pair.out.frames[i]!] }, [top[i]!], half(all.pair), all.pair.width) === 1 &&
    heldShare(all.pair.people[1]!, { ...pair.out, times: [pair.out.times[i]!], frames: [pair.out.frames[i]!] }, [bottom[i]!], half(all.pair), all.pair.width) === 1,
  ).length;

  // walk: the one person inside the crop, except while hidden (the camera holds where the face was lost).
  const walk = await rendered(all.walk, "walk", "single", false);
  const walkCamera = await cameraTrack(all.walk, walk.out, single(all.walk));
  const walker = all.walk.people[0]!;
  const visible = (t: number) => !walker.hidden || t < walker.hidden[0] || t >= walker.hidden[1];
  const walkHeld = heldShare(walker, walk.out, walkCamera, single(all.walk), all.walk.width, visible);

  const talk = await rendered(all.talk, "talk", "single", true);
  const talkCamera = await cameraTrack(all.talk, talk.out, single(all.talk));
  const turns = framedTurns({ turns: all.talk.turns, placements: all.talk.people, out: talk.out, camera: talkCamera, split: splitFrames(talk.out), window: single(all.talk), sourceWidth: all.talk.width, shortest: MIN_SHOT_SECONDS, within: 1 });
  // The speaker inside the crop over the time of each turn a shot or longer, from 1 s after it starts (split frames do not count).
  const talkSplit = splitFrames(talk.out);
  const inTurn = (t: number) => all.talk.turns.some((turn) => turn.end - turn.start >= MIN_SHOT_SECONDS && t >= turn.start + 1 && t < turn.end);
  const speakerAt = (t: number) => all.talk.turns.find((turn) => t >= turn.start + 1 && t < turn.end)!.speaker;
  const talkJudged = talk.out.times.map((t, i) => ({ t, i })).filter(({ t }) => inTurn(t));
  const talkHeld = talkJudged.filter(({ t, i }) => !talkSplit[i] && insideWindow(faceBoxAt(all.talk.people[speakerAt(t)]!, t), talkCamera[i]!, single(all.talk), all.talk.width)).length / talkJudged.length;
  const held = {
    walk: round(walkHeld, 3),
    drift: round(driftHeld, 3),
    pair_split_both: round(both / pair.out.frames.length, 3),
    talk_speaker: round(talkHeld, 3),
  };
  console.log(`bench:faces: held shares (share of judged output time the crop holds the right subject): ${Object.entries(held).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  return {
    held_shares: held,
    walk: { faces: walk.plan.facesCount, frames_judged: walk.out.frames.length, face_in_crop_while_visible: round(walkHeld, 3) },
    drift: { faces: drift.plan.facesCount, frames_judged: drift.out.frames.length, face_in_crop: round(driftHeld, 3), ...(heldBefore !== undefined ? { before_face_in_crop: round(heldBefore, 3) } : {}) },
    pair_split: { faces: pair.plan.facesCount, frames_judged: pair.out.frames.length, both_one_per_half: round(both / pair.out.frames.length, 3) },
    talk: { faces: talk.plan.facesCount, turns_judged: turns.length, speaker_framed_within_1s: round(turns.filter(Boolean).length / turns.length, 3), speaker_in_crop_share: round(talkHeld, 3) },
  };
}

async function main(): Promise<void> {
  await mkdir(WORK, { recursive: true });
  const recipes = sources();
  // Loading the models is once per engine process, not per job: done before any clock starts, reported apart.
  const loadAtStart = os.loadavg().map((l) => round(l));
  const load = await measured(() => faceApi());
  const old = await before();
  await old?.faceApi();
  const cost: Record<string, unknown>[] = [];
  for (const name of ["walk", "talk"] as const) {
    const source = await recipes[name]();
    // ROUNDS rounds, each running the three jobs in a turned order, so a slow spell of the machine or the order itself does not
    // fall on one kind of job; each kind's figures are its median round's (by CPU), the ratios medians over medians.
    const runs: Record<Reframe, Record<string, unknown>[]> = { faces: [], center: [], fit: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < REFRAMES.length; k++) {
        const reframe = REFRAMES[(r + k) % REFRAMES.length]!;
        runs[reframe].push(await costJob(source, reframe, reframe === "faces" && r === 0 ? old : null));
      }
    }
    const [faces, center, fit] = REFRAMES.map((reframe) => medianRun(runs[reframe]));
    const ratio = (job: Record<string, unknown>, key: "job_wall_s" | "job_cpu_s") => round(Number(job[key]) / Number(center![key]), 2);
    const cpuRounds = (reframe: Reframe) => runs[reframe].map((j) => j.job_cpu_s);
    // Per round, the renders of the faces job's clips (as planned, mirrored, stepped) over the same round's centre renders.
    const renders = (job: Record<string, unknown>, key: string) => (job.clips as Record<string, unknown>[]).reduce((sum, c) => sum + Number(c[key]), 0);
    const medianOf = (values: number[]) => median(values, (v) => v);
    const overCenter = (key: string) => medianOf(runs.faces.map((job, r) => renders(job, key) - renders(runs.center[r]!, "render_cpu_s")));
    const breakdown = breaksDownRenders(source);
    const extra = {
      detection_cpu_s: round(Number(faces!.detection_cpu_s), 2),
      render_over_center_cpu_s: round(overCenter("render_cpu_s")),
      ...(breakdown
        ? {
            camera_motion_cpu_s: round(overCenter("mirrored_render_cpu_s")),
            picture_shown_cpu_s: round(medianOf(runs.faces.map((job) => renders(job, "render_cpu_s") - renders(job, "mirrored_render_cpu_s")))),
            stepped_render_over_center_cpu_s: round(overCenter("stepped_render_cpu_s")),
          }
        : {}),
    };
    const signed = (v: number | undefined) => `${Number(v) >= 0 ? "+" : ""}${v}`;
    console.log(
      `bench:faces: ${name}: the faces job over center, CPU s (medians of rounds): detection ${extra.detection_cpu_s}, renders ${signed(extra.render_over_center_cpu_s)}` +
        (breakdown
          ? ` (the camera's motion ${signed(extra.camera_motion_cpu_s)}: its path mirrored over center; the picture it shows ${signed(extra.picture_shown_cpu_s)}: as planned over mirrored);` +
            ` a camera re-framing in steps would render at ${signed(extra.stepped_render_over_center_cpu_s)}`
          : ""),
    );
    cost.push({
      source: name,
      faces_extra_over_center: extra,
      rounds: ROUNDS,
      job_cpu_s_by_round: { faces: cpuRounds("faces"), center: cpuRounds("center"), fit: cpuRounds("fit") },
      // The earlier reframing plans the same clips once, beside the first round's faces job (its figures are in that run).
      ...(old ? { faces_round_1_with_before: runs.faces[0] } : {}),
      faces,
      center,
      fit,
      faces_vs_center_wall: ratio(faces!, "job_wall_s"),
      faces_vs_center_cpu: ratio(faces!, "job_cpu_s"),
      fit_vs_center_wall: ratio(fit!, "job_wall_s"),
      fit_vs_center_cpu: ratio(fit!, "job_cpu_s"),
    });
    console.log(
      `bench:faces: ${name}: median of ${ROUNDS} rounds, CPU / wall s: faces ${faces!.job_cpu_s} / ${faces!.job_wall_s}, center ${center!.job_cpu_s} / ${center!.job_wall_s}, fit ${fit!.job_cpu_s} / ${fit!.job_wall_s}; ` +
        `faces/center ${ratio(faces!, "job_cpu_s")} CPU, ${ratio(faces!, "job_wall_s")} wall; fit/center ${ratio(fit!, "job_cpu_s")} CPU, ${ratio(fit!, "job_wall_s")} wall` +
        ` (CPU by round: faces ${cpuRounds("faces").join(", ")}; center ${cpuRounds("center").join(", ")}; fit ${cpuRounds("fit").join(", ")})`,
    );
  }
  const summary = {
    machine: { cpus: os.cpus().length, load_average_at_start: loadAtStart, load_average_at_end: os.loadavg().map((l) => round(l)) },
    model_load_wall_s: round(load.wall, 2),
    model_load_cpu_s: round(load.cpu, 2),
    cost,
    framing: await framing({ walk: await recipes.walk(), talk: await recipes.talk(), drift: await recipes.drift(), pair: await recipes.pair() }, old),
  };
  console.log(JSON.stringify(summary, null, 2));
  const out = path.join(PROJECT_ROOT, "bench", "results");
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, `faces-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), JSON.stringify(summary, null, 2));
}

await main();
