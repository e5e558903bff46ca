/**
 * Test sources for face reframing, built from the real photographs that ship
 * inside @vladmandic/face-api (demo/sample*.jpg; nothing committed): a
 * head-and-shoulders cut-out of one person is moved across a 16:9 background
 * along a known path, optionally with a larger, faster orange block as a
 * distractor and a tone so the source has audio.
 *
 * The background's top band is a left-to-right luminance ramp that nothing
 * covers: the mean brightness of the top rows of a rendered clip therefore
 * tells where the crop window sits, measured from the output alone.
 */
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { runProcess } from "../../src/spawn.ts";
import { FFMPEG } from "./media.ts";

const require = createRequire(import.meta.url);
export const SAMPLE_DIR = path.join(path.dirname(require.resolve("@vladmandic/face-api/package.json")), "demo");

/** A cut-out of one photo and where the face is inside it (fractions of the cut-out). */
export interface Person {
  photo: string;
  crop: { x: number; y: number; width: number; height: number };
  face: { x: number; y: number; width: number; height: number };
}

/** Face boxes measured once on the 1920-wide photos with face-api's SSD detector. */
export const PEOPLE = {
  /** sample1.jpg, the woman on the right. */
  anna: { photo: "sample1.jpg", crop: { x: 1380, y: 100, width: 400, height: 500 }, face: { x: 96 / 400, y: 98 / 500, width: 203 / 400, height: 241 / 500 } },
  /** sample3.jpg, the woman on the left. */
  bea: { photo: "sample3.jpg", crop: { x: 480, y: 230, width: 400, height: 500 }, face: { x: 105 / 400, y: 99 / 500, width: 198 / 400, height: 271 / 500 } },
} satisfies Record<string, Person>;

/** Piecewise-linear motion: [t, x, y] keyframes (x, y: the cut-out's top-left, pixels). */
export type Keyframes = [number, number, number][];

export function positionAt(keys: Keyframes, t: number): { x: number; y: number } {
  if (t <= keys[0]![0]) return { x: keys[0]![1], y: keys[0]![2] };
  for (let i = 1; i < keys.length; i++) {
    const [t1, x1, y1] = keys[i]!;
    if (t > t1) continue;
    const [t0, x0, y0] = keys[i - 1]!;
    const f = (t - t0) / (t1 - t0);
    return { x: x0 + (x1 - x0) * f, y: y0 + (y1 - y0) * f };
  }
  const last = keys.at(-1)!;
  return { x: last[1], y: last[2] };
}

function expression(keys: Keyframes, axis: 1 | 2): string {
  let expr = String(keys.at(-1)![axis]);
  for (let i = keys.length - 1; i >= 1; i--) {
    const [t0] = keys[i - 1]!;
    const [t1] = keys[i]!;
    const v0 = keys[i - 1]![axis];
    const v1 = keys[i]![axis];
    expr = `if(lt(t,${t1}),${v0}+(${v1 - v0})*(t-${t0})/${t1 - t0},${expr})`;
  }
  return `if(lt(t,${keys[0]![0]}),${keys[0]![axis]},${expr})`;
}

export interface Placement {
  person: Person;
  /** Width of the cut-out in the composition, pixels (its height follows the cut-out's shape). */
  width: number;
  path: Keyframes;
  /** Seconds [from, to) during which the person is hidden (the detector loses them). */
  hidden?: [number, number];
}

export interface Composition {
  seconds: number;
  width: number;
  height: number;
  fps: number;
  people: Placement[];
  distractor?: boolean;
  /** Stored rotated by 90 degrees with a display rotation tag (players and ffmpeg show it upright). */
  rotated?: boolean;
}

export const DISTRACTOR = { width: 170, height: 230, top: 110 };
/** The distractor's left edge at `t`: sweeps the whole frame about 0.7 times a second. */
export function distractorX(t: number, frameWidth: number): number {
  const travel = frameWidth - DISTRACTOR.width;
  return travel / 2 + (travel / 2) * Math.sin(2 * Math.PI * 0.7 * t);
}

/** The true face box of a placement at `t`, in composition pixels. */
export function faceBoxAt(placement: Placement, t: number): { x: number; y: number; width: number; height: number } {
  const { person, width } = placement;
  const scale = width / person.crop.width;
  const height = person.crop.height * scale;
  const at = positionAt(placement.path, t);
  return { x: at.x + person.face.x * width, y: at.y + person.face.y * height, width: person.face.width * width, height: person.face.height * height };
}

async function ffmpeg(args: string[], what: string): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-v", "error", "-y", ...args], timeoutMs: 120_000 });
  if (result.exitCode !== 0) throw new Error(`${what} failed: ${result.stderrTail}`);
}

export async function compose(out: string, c: Composition): Promise<void> {
  // The background, drawn once: a ramp in the top band (the camera gauge), a darker textured field below.
  const background = `${out}.background.png`;
  await ffmpeg(
    [
      "-f", "lavfi", "-i", `nullsrc=s=${c.width}x${c.height}`,
      "-vf", `format=gray,geq=lum='if(lt(Y,${Math.round(c.height * 0.12)}),30+190*X/W,60+20*sin(X/9)*sin(Y/7))'`,
      "-frames:v", "1", background,
    ],
    "drawing the background",
  );
  const inputs = ["-loop", "1", "-framerate", String(c.fps), "-t", String(c.seconds), "-i", background];
  const chains: string[] = ["[0:v]format=yuv420p[bg0]"];
  let last = "bg0";
  if (c.distractor) {
    const travel = c.width - DISTRACTOR.width;
    chains.push(`color=c=0xff8800:s=${DISTRACTOR.width}x${DISTRACTOR.height}:r=${c.fps}:d=${c.seconds}[blk]`);
    chains.push(`[${last}][blk]overlay=x='${travel / 2}+${travel / 2}*sin(2*PI*0.7*t)':y=${DISTRACTOR.top}:eval=frame[bgd]`);
    last = "bgd";
  }
  c.people.forEach((p, i) => {
    inputs.push("-loop", "1", "-framerate", String(c.fps), "-t", String(c.seconds), "-i", path.join(SAMPLE_DIR, p.person.photo));
    const { crop } = p.person;
    const height = Math.round((crop.height * p.width) / crop.width / 2) * 2;
    chains.push(`[${i + 1}:v]crop=${crop.width}:${crop.height}:${crop.x}:${crop.y},scale=${p.width}:${height},format=yuv420p[p${i}]`);
    const enable = p.hidden ? `:enable='not(between(t,${p.hidden[0]},${p.hidden[1]}))'` : "";
    chains.push(`[${last}][p${i}]overlay=x='${expression(p.path, 1)}':y='${expression(p.path, 2)}':eval=frame${enable}[v${i}]`);
    last = `v${i}`;
  });
  chains.push(`[${last}]${c.rotated ? "transpose=clock," : ""}format=yuv420p[out]`);
  await ffmpeg(
    [
      ...inputs,
      "-f", "lavfi", "-i", `sine=frequency=330:duration=${c.seconds}`,
      "-filter_complex", chains.join(";"),
      "-map", "[out]", "-map", `${c.people.length + 1}:a`,
      "-t", String(c.seconds),
      "-c:v", "libx264", "-preset", "ultrafast", "-crf", "20", "-g", String(c.fps * 2),
      "-c:a", "aac", "-b:a", "64k",
      c.rotated ? `${out}.stored.mp4` : out,
    ],
    "composing the face test video",
  );
  await rm(background, { force: true });
  if (c.rotated) {
    // The picture is stored turned clockwise; the container's display matrix says to turn it back when shown.
    await ffmpeg(["-i", `${out}.stored.mp4`, "-c", "copy", "-metadata:s:v:0", "rotate=90", out], "tagging the rotation");
    await rm(`${out}.stored.mp4`, { force: true });
  }
}
