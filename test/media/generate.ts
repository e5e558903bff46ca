/**
 * Test-media generator: makes H.264/AAC MP4 sources with a known, planted
 * structure, using ffmpeg's lavfi sources (argument arrays, never a shell).
 *
 * API
 *   planMedia(spec): MediaFacts
 *     Pure: the structure a spec plants (see plan.ts for MediaSpec/MediaFacts).
 *   generateMedia(spec, outPath): Promise<MediaFacts>
 *     Writes the MP4 at outPath and returns its facts.
 *   cachedMedia(spec, dir = ".tmp/media"): Promise<{ path, facts }>
 *     Same, but reuses a file made earlier from the same spec (keyed by a hash
 *     of the spec), so slow sources (the bench's 10-minute 1080p) are made once.
 *   demoSpec(): MediaSpec
 *     The 2-minute 1280x720 demo source: speech, pauses, loud moments, scene changes.
 *
 * What is planted
 *   - Audio "speech": phrases (a voiced harmonic mixture amplitude-modulated at a
 *     syllable rate of about 4 Hz) separated by pauses that are near-silent
 *     (a noise floor around -60 dBFS, like a quiet room). About one phrase in
 *     four is emphasised (louder). `facts.phrases` / `facts.pauses`.
 *   - Loud bursts: white noise near full scale (about -5 LUFS against about
 *     -22 LUFS for plain phrases and -15 for emphasised ones) at `spec.bursts`, and the subject
 *     shakes fast on screen at the same time (a motion burst). `facts.bursts`.
 *   - Scenes: flat backgrounds of strongly different colours, changing at
 *     `spec.sceneChanges` (rounded to frames). `facts.sceneChanges` / `facts.scenes`.
 *   - Subject: a bright square off-centre, one position per scene, drifting
 *     slowly (plus or minus 3% of the width). `facts.scenes[i].subject`.
 *   - Optional grain (`spec.grain`): temporal noise, so decoding and encoding
 *     cost about what camera footage costs (used by the bench).
 *   - Keyframes every `keyframeIntervalSeconds` (default 2 s) and, by default,
 *     at each scene change (as x264's scenecut would place them).
 *
 * Generation uses libx264 ultrafast; the defaults (320x180, 15 fps) keep it
 * to a second or two per minute of source. The binary is FFMPEG_PATH or ffmpeg.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { commitCached, partialPath } from "./cache.ts";
import { planMedia, type MediaFacts, type MediaSpec } from "./plan.ts";

export { planMedia };
export type { MediaFacts, MediaSpec };
export type { Interval, Phrase, Scene, AudioKind } from "./plan.ts";

const SAMPLE_RATE = 44100;
/** About -60 dBFS: a quiet room. */
const DEFAULT_NOISE_FLOOR = 0.0015;
/** Small audio frames so per-frame gating follows the planned times to about 6 ms. */
const AUDIO_FRAME_SAMPLES = 256;

function num(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(4);
}

/** Sum of between(t,a,b)*gain terms: a gate evaluated per audio or video frame. */
function gateExpression(intervals: { start: number; end: number; gain?: number }[], offset = 0): string {
  if (intervals.length === 0) return "0";
  return intervals
    .map((i) => `between(t,${num(i.start - offset)},${num(i.end - offset)})*${num(i.gain ?? 1)}`)
    .join("+");
}

function audioGraph(facts: MediaFacts): { graph: string[]; label: string } | null {
  const d = num(facts.durationSeconds);
  if (facts.audio === "none") return null;
  if (facts.audio === "silence") {
    return { graph: [`anullsrc=r=${SAMPLE_RATE}:cl=mono,atrim=duration=${d}[aout]`], label: "[aout]" };
  }
  // A voiced-sounding harmonic stack (about 165 Hz fundamental) with syllable-rate modulation.
  const voice =
    "0.7*(0.55+0.45*sin(2*PI*4.3*t))*(sin(2*PI*165*t)+0.5*sin(2*PI*330*t)+0.3*sin(2*PI*495*t)+0.15*sin(2*PI*1150*t))";
  const speechGate = gateExpression(facts.phrases);
  // Burst gate on top of a faint room-noise floor, so pauses are quiet but not digital zero.
  const noiseGate = `${num(facts.noiseFloor ?? DEFAULT_NOISE_FLOOR)}+${gateExpression(facts.bursts)}`;
  return {
    graph: [
      `aevalsrc=exprs='${voice}':s=${SAMPLE_RATE}:d=${d}:n=${AUDIO_FRAME_SAMPLES}:c=mono,volume=eval=frame:volume='${speechGate}'[speech]`,
      `anoisesrc=d=${d}:c=white:r=${SAMPLE_RATE}:a=0.7:seed=7:n=${AUDIO_FRAME_SAMPLES},volume=eval=frame:volume='${noiseGate}'[noise]`,
      `[speech][noise]amix=inputs=2:normalize=0:duration=first[aout]`,
    ],
    label: "[aout]",
  };
}

function videoGraph(facts: MediaFacts): string[] {
  const { width, height, fps, subjectSize } = facts;
  const graph: string[] = [];
  const labels: string[] = [];
  const grain = facts.grain > 0 ? `,noise=alls=${Math.round(facts.grain)}:allf=t` : "";
  facts.scenes.forEach((scene, index) => {
    // Scene lengths in whole frames (trim by frame count), so cuts land exactly on the planned frames.
    const frames = Math.round(scene.end * fps) - Math.round(scene.start * fps);
    const exact = `trim=end_frame=${frames},setpts=PTS-STARTPTS`;
    const background = `color=c=${scene.color}:s=${width}x${height}:r=${fps},${exact}`;
    if (!scene.subject) {
      graph.push(`${background}[v${index}]`);
    } else {
      const shakes = facts.bursts.filter((b) => b.end > scene.start && b.start < scene.end);
      const shake = shakes.length ? `+(${gateExpression(shakes, scene.start)})*${num(0.08 * width)}*sin(2*PI*5*t)` : "";
      const x = `${num(scene.subject.centerX * width - subjectSize / 2)}+${num(0.03 * width)}*sin(2*PI*t/5)${shake}`;
      const y = `${num(scene.subject.centerY * height - subjectSize / 2)}`;
      graph.push(`${background}[bg${index}]`);
      graph.push(`color=c=0xfafaf0:s=${subjectSize}x${subjectSize}:r=${fps},${exact}[sq${index}]`);
      graph.push(`[bg${index}][sq${index}]overlay=eval=frame:x='${x}':y='${y}'[v${index}]`);
    }
    labels.push(`[v${index}]`);
  });
  graph.push(`${labels.join("")}concat=n=${labels.length}:v=1:a=0${grain},format=yuv420p[vout]`);
  return graph;
}

export function buildGenerateArgs(facts: MediaFacts, outPath: string): string[] {
  const audio = audioGraph(facts);
  const graph = [...videoGraph(facts), ...(audio?.graph ?? [])].join(";");
  const keyframes = facts.keyframesAtSceneChanges && facts.sceneChanges.length
    ? ["-force_key_frames", facts.sceneChanges.map(num).join(",")]
    : [];
  return [
    "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
    "-filter_complex", graph,
    "-map", "[vout]",
    ...(audio ? ["-map", audio.label, "-c:a", "aac", "-b:a", "96k", "-ar", String(SAMPLE_RATE)] : []),
    "-c:v", "libx264", "-preset", "ultrafast", "-crf", "23",
    ...(facts.maxBitrateKbps ? ["-maxrate", `${facts.maxBitrateKbps}k`, "-bufsize", `${facts.maxBitrateKbps * 2}k`] : []),
    "-g", String(Math.max(1, Math.round(facts.keyframeIntervalSeconds * facts.fps))),
    ...keyframes,
    "-t", num(facts.durationSeconds),
    "-movflags", "+faststart",
    outPath,
  ];
}

function runFfmpeg(args: string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.env.FFMPEG_PATH ?? "ffmpeg", args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`test-media ffmpeg exited ${code}: ${stderr}`));
    });
  });
}

export async function generateMedia(spec: MediaSpec, outPath: string): Promise<MediaFacts> {
  const facts = planMedia(spec);
  await mkdir(dirname(outPath), { recursive: true });
  await runFfmpeg(buildGenerateArgs(facts, outPath));
  return facts;
}

export async function cachedMedia(spec: MediaSpec, dir = ".tmp/media"): Promise<{ path: string; facts: MediaFacts }> {
  const facts = planMedia(spec);
  // The key covers the planned structure and the generator's own arguments, so a change to either remakes the file.
  const key = createHash("sha256")
    .update(JSON.stringify(facts))
    .update(buildGenerateArgs(facts, "out.mp4").join("\u0000"))
    .digest("hex")
    .slice(0, 16);
  const path = resolve(join(dir, `${key}.mp4`));
  if (!existsSync(path)) {
    const partial = partialPath(path);
    await generateMedia(spec, partial);
    await commitCached(partial, path, facts);
  }
  return { path, facts: existsSync(`${path}.json`) ? (JSON.parse(await readFile(`${path}.json`, "utf8")) as MediaFacts) : facts };
}

/** The `npm run demo` source: 2 minutes of 1280x720 with speech, pauses, loud moments and scene changes. */
export function demoSpec(): MediaSpec {
  return {
    durationSeconds: 120,
    width: 1280,
    height: 720,
    fps: 30,
    audio: "speech",
    bursts: [22, 47, 81, 104],
    sceneChanges: [15, 31, 44, 60, 73, 90, 108],
    seed: 42,
  };
}
