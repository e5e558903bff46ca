/**
 * Test sources for face reframing, built from the real photographs that ship
 * inside @vladmandic/face-api (demo/sample*.jpg; nothing committed): a
 * head-and-shoulders cut-out of a person is moved across a 16:9 background
 * along a known path. A placement may be turned (a tilted head), partly
 * covered (a hand over the mouth), framed in a coloured border, hidden for a
 * while, and may talk: its mouth opens and closes frame by frame with the
 * envelope of its own espeak-ng voice (see `conversation`). Optionally a
 * larger, faster orange block sweeps across as a distractor. The audio is the
 * voices, or a tone.
 *
 * The background's top band is a left-to-right luminance ramp that nothing
 * covers: the mean brightness of the top rows of a rendered clip therefore
 * tells where the crop window sits, measured from the output alone.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { ESPEAK_RATE, speakSentence } from "../../../test/media/espeak.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import { FFMPEG } from "./media.ts";

const require = createRequire(import.meta.url);
export const SAMPLE_DIR = path.join(path.dirname(require.resolve("@vladmandic/face-api/package.json")), "demo");

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A cut-out of one photo and where the face (and its mouth) is inside it, as fractions of the cut-out. */
export interface Person {
  photo: string;
  crop: Box;
  face: Box;
  /** The mouth's centre and its width (corner to corner), fractions of the cut-out's width and height. */
  mouth?: { x: number; y: number; width: number };
}

/**
 * A head-and-shoulders cut-out around a face measured on the photo (pixels of
 * the 1920-wide photo: the face box and mouth found once with face-api's SSD
 * detector and 68-point landmarks).
 */
function cutOut(photo: string, face: Box, mouth: { x: number; y: number; width: number }): Person {
  const crop = { x: Math.round(face.x - face.width / 2), y: Math.round(face.y - face.height * 0.45), width: Math.round(face.width * 2), height: Math.round(face.height * 2.05) };
  return {
    photo,
    crop,
    face: { x: (face.x - crop.x) / crop.width, y: (face.y - crop.y) / crop.height, width: face.width / crop.width, height: face.height / crop.height },
    mouth: { x: (mouth.x - crop.x) / crop.width, y: (mouth.y - crop.y) / crop.height, width: mouth.width / crop.width },
  };
}

export const PEOPLE = {
  /** sample1.jpg, the woman on the right (head tilted about 43 degrees). */
  anna: { photo: "sample1.jpg", crop: { x: 1380, y: 100, width: 400, height: 500 }, face: { x: 96 / 400, y: 98 / 500, width: 203 / 400, height: 241 / 500 } },
  /** sample3.jpg, the woman on the left (upright). */
  bea: { photo: "sample3.jpg", crop: { x: 480, y: 230, width: 400, height: 500 }, face: { x: 105 / 400, y: 99 / 500, width: 198 / 400, height: 271 / 500 }, mouth: { x: 189 / 400, y: 305 / 500, width: 67 / 400 } },
  /** sample5.jpg, second from the right, upright. */
  cara: cutOut("sample5.jpg", { x: 1112, y: 198, width: 159, height: 237 }, { x: 1182, y: 373, width: 69 }),
  /** sample6.jpg, second from the right, upright. */
  dana: cutOut("sample6.jpg", { x: 1181, y: 305, width: 188, height: 279 }, { x: 1275, y: 535, width: 72 }),
  /** sample1.jpg, the woman on the left, upright. */
  ivy: cutOut("sample1.jpg", { x: 414, y: 355, width: 177, height: 239 }, { x: 473, y: 546, width: 68 }),
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

function expression(keys: Keyframes, axis: 1 | 2, shift: number): string {
  let expr = String(keys.at(-1)![axis] - shift);
  for (let i = keys.length - 1; i >= 1; i--) {
    const [t0] = keys[i - 1]!;
    const [t1] = keys[i]!;
    const v0 = keys[i - 1]![axis] - shift;
    const v1 = keys[i]![axis] - shift;
    expr = `if(lt(t,${t1}),${v0}+(${v1 - v0})*(t-${t0})/${t1 - t0},${expr})`;
  }
  return `if(lt(t,${keys[0]![0]}),${keys[0]![axis] - shift},${expr})`;
}

export interface Placement {
  person: Person;
  /** Width of the cut-out in the composition, pixels (its height follows the cut-out's shape). */
  width: number;
  path: Keyframes;
  /** Seconds [from, to) during which the person is hidden (the detector loses them). */
  hidden?: [number, number];
  /** Turned clockwise by this many degrees about the cut-out's centre (negative: anticlockwise). */
  rotate?: number;
  /** A skin-coloured block over part of the face (fractions of the face box), as a hand would cover it. */
  cover?: Box;
  /** A coloured frame this many pixels wide around the cut-out; its right side in `right` when given (so a judge can tell the two sides apart). */
  border?: { color: string; size: number; right?: string };
  /** How far the mouth is open (0-1) in each video frame (index = frame number); omitted: as photographed. */
  mouth?: Float32Array;
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
  /** Mono samples at ESPEAK_RATE for the audio track; omitted: a 330 Hz tone. */
  audio?: Float32Array;
}

export const DISTRACTOR = { width: 170, height: 230, top: 110 };
/** The distractor's left edge at `t`: sweeps the whole frame about 0.7 times a second. */
export function distractorX(t: number, frameWidth: number): number {
  const travel = frameWidth - DISTRACTOR.width;
  return travel / 2 + (travel / 2) * Math.sin(2 * Math.PI * 0.7 * t);
}

/** The cut-out's size in the composition. */
function shownSize(placement: Placement): { width: number; height: number } {
  const { crop } = placement.person;
  return { width: placement.width, height: Math.round((crop.height * placement.width) / crop.width / 2) * 2 };
}

/**
 * The true face box of a placement at `t`, in composition pixels: for a
 * turned cut-out, the box around the turned face box.
 */
export function faceBoxAt(placement: Placement, t: number): Box {
  const { person } = placement;
  const size = shownSize(placement);
  const at = positionAt(placement.path, t);
  const box = { x: at.x + person.face.x * size.width, y: at.y + person.face.y * size.height, width: person.face.width * size.width, height: person.face.height * size.height };
  const degrees = placement.rotate ?? 0;
  if (degrees === 0) return box;
  const a = (degrees * Math.PI) / 180;
  const cx = at.x + size.width / 2;
  const cy = at.y + size.height / 2;
  const corners = [
    [box.x, box.y],
    [box.x + box.width, box.y],
    [box.x, box.y + box.height],
    [box.x + box.width, box.y + box.height],
  ].map(([x, y]) => [cx + (x! - cx) * Math.cos(a) - (y! - cy) * Math.sin(a), cy + (x! - cx) * Math.sin(a) + (y! - cy) * Math.cos(a)] as const);
  const xs = corners.map((c) => c[0]);
  const ys = corners.map((c) => c[1]);
  return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
}

async function ffmpeg(args: string[], what: string): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-v", "error", "-y", ...args], timeoutMs: 180_000 });
  if (result.exitCode !== 0) throw new Error(`${what} failed: ${result.stderrTail}`);
}

/**
 * One RGBA patch per video frame: a dark open mouth (an ellipse as wide as
 * 0.84 of the lips, as tall as `open` x half their width), transparent around it.
 */
function mouthFrames(open: Float32Array, frames: number, width: number, height: number): Buffer {
  const out = Buffer.alloc(frames * width * height * 4);
  const a = width * 0.42;
  for (let n = 0; n < frames; n++) {
    const b = (open[Math.min(n, open.length - 1)] ?? 0) * width * 0.25;
    if (b < 0.5) continue;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const r = Math.hypot((x + 0.5 - width / 2) / a, (y + 0.5 - height / 2) / b);
        // A one-pixel soft edge, so the opening grows smoothly rather than by whole rows.
        const alpha = Math.max(0, Math.min(1, (1 - r) * Math.min(a, b) + 0.5));
        if (alpha <= 0) continue;
        const i = ((n * height + y) * width + x) * 4;
        out[i] = 45;
        out[i + 1] = 12;
        out[i + 2] = 18;
        out[i + 3] = Math.round(alpha * 255);
      }
    }
  }
  return out;
}

export async function compose(out: string, c: Composition): Promise<void> {
  const scratch = await mkdtemp(path.join(tmpdir(), "faces-media-"));
  try {
    // The background, drawn once: a ramp in the top band (the camera gauge), a darker textured field below.
    const background = path.join(scratch, "background.png");
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
    const frames = Math.ceil(c.seconds * c.fps) + 1;
    let input = 1;
    for (const [i, p] of c.people.entries()) {
      const photoInput = input++;
      inputs.push("-loop", "1", "-framerate", String(c.fps), "-t", String(c.seconds), "-i", path.join(SAMPLE_DIR, p.person.photo));
      const { crop, face } = p.person;
      const steps = [`crop=${crop.width}:${crop.height}:${crop.x}:${crop.y}`];
      let source = `[${photoInput}:v]`;
      if (p.mouth && p.person.mouth) {
        // The talking mouth, drawn on the photo's own pixels before the cut-out is scaled and turned.
        const width = Math.max(8, Math.round((p.person.mouth.width * crop.width) / 2) * 2);
        const height = Math.round(width * 0.6 / 2) * 2;
        const file = path.join(scratch, `mouth-${i}.rgba`);
        await writeFile(file, mouthFrames(p.mouth, frames, width, height));
        const mouthInput = input++;
        inputs.push("-f", "rawvideo", "-pix_fmt", "rgba", "-s", `${width}x${height}`, "-framerate", String(c.fps), "-i", file);
        chains.push(`${source}${steps.join(",")}[cut${i}]`);
        const mx = Math.round(p.person.mouth.x * crop.width - width / 2);
        const my = Math.round(p.person.mouth.y * crop.height - height / 2);
        chains.push(`[cut${i}][${mouthInput}:v]overlay=x=${mx}:y=${my}:eof_action=repeat[talk${i}]`);
        source = `[talk${i}]`;
        steps.length = 0;
      }
      if (p.cover) {
        const x = Math.round((face.x + face.width * p.cover.x) * crop.width);
        const y = Math.round((face.y + face.height * p.cover.y) * crop.height);
        steps.push(`drawbox=x=${x}:y=${y}:w=${Math.round(face.width * p.cover.width * crop.width)}:h=${Math.round(face.height * p.cover.height * crop.height)}:color=0xc89a78:t=fill`);
      }
      const size = shownSize(p);
      steps.push(`scale=${size.width}:${size.height}`);
      let extent = { width: size.width, height: size.height };
      if (p.border) {
        steps.push(`pad=iw+${2 * p.border.size}:ih+${2 * p.border.size}:${p.border.size}:${p.border.size}:color=${p.border.color}`);
        if (p.border.right) steps.push(`drawbox=x=iw-${p.border.size}:y=0:w=${p.border.size}:h=ih:color=${p.border.right}:t=fill`);
        extent = { width: size.width + 2 * p.border.size, height: size.height + 2 * p.border.size };
      }
      if (p.rotate) {
        const a = (p.rotate * Math.PI) / 180;
        const w = Math.ceil((Math.abs(extent.width * Math.cos(a)) + Math.abs(extent.height * Math.sin(a))) / 2) * 2;
        const h = Math.ceil((Math.abs(extent.width * Math.sin(a)) + Math.abs(extent.height * Math.cos(a))) / 2) * 2;
        steps.push(`format=rgba,rotate=${a.toFixed(6)}:ow=${w}:oh=${h}:c=none`);
        extent = { width: w, height: h };
      } else steps.push("format=yuva420p");
      chains.push(`${source}${steps.join(",")}[p${i}]`);
      // The path places the cut-out's top-left; a border or a turn grows the picture about its centre.
      const shiftX = (extent.width - size.width) / 2;
      const shiftY = (extent.height - size.height) / 2;
      const enable = p.hidden ? `:enable='not(between(t,${p.hidden[0]},${p.hidden[1]}))'` : "";
      chains.push(`[${last}][p${i}]overlay=x='${expression(p.path, 1, shiftX)}':y='${expression(p.path, 2, shiftY)}':eval=frame${enable}[v${i}]`);
      last = `v${i}`;
    }
    chains.push(`[${last}]${c.rotated ? "transpose=clock," : ""}format=yuv420p[out]`);
    const audioInput = input;
    if (c.audio) {
      const pcm = path.join(scratch, "voice.f32");
      await writeFile(pcm, Buffer.from(c.audio.buffer, c.audio.byteOffset, c.audio.byteLength));
      inputs.push("-f", "f32le", "-ar", String(ESPEAK_RATE), "-ac", "1", "-i", pcm);
    } else inputs.push("-f", "lavfi", "-i", `sine=frequency=330:duration=${c.seconds}`);
    const stored = c.rotated ? path.join(scratch, "stored.mp4") : out;
    await ffmpeg(
      [
        ...inputs,
        "-filter_complex", chains.join(";"),
        "-map", "[out]", "-map", `${audioInput}:a`,
        "-t", String(c.seconds),
        "-c:v", "libx264", "-preset", "ultrafast", "-crf", "20", "-g", String(c.fps * 2),
        "-c:a", "aac", "-b:a", "64k", "-ar", "44100",
        stored,
      ],
      "composing the face test video",
    );
    if (c.rotated) {
      // The picture is stored turned clockwise; the container's display matrix says to turn it back when shown.
      await ffmpeg(["-i", stored, "-c", "copy", "-metadata:s:v:0", "rotate=90", out], "tagging the rotation");
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** One line of a conversation: who says it (an index into the voices) and what. */
export interface Line {
  speaker: number;
  text: string;
}

/** Where a line was spoken, seconds of the source. */
export interface Turn extends Line {
  start: number;
  end: number;
}

export interface Conversation {
  seconds: number;
  /** The mix of all voices, mono at ESPEAK_RATE. */
  audio: Float32Array;
  turns: Turn[];
  /** Per speaker: how far the mouth is open in each video frame, from that speaker's own voice. */
  mouths: Float32Array[];
}

/**
 * Speaks the lines with espeak-ng, one voice per speaker, one after the other
 * with `gap` seconds between them, and derives each speaker's mouth from the
 * envelope of their own voice: per video frame, the RMS over that frame's
 * span relative to the speaker's loud frames, 0 below a tenth.
 */
export async function conversation(lines: Line[], voices: string[], options: { fps: number; gap: number; lead: number; tail: number }): Promise<Conversation> {
  const work = await mkdtemp(path.join(tmpdir(), "faces-voices-"));
  try {
    const spoken: Float32Array[] = [];
    const turns: Turn[] = [];
    let at = options.lead;
    for (const [i, line] of lines.entries()) {
      const samples = await speakSentence(line.text, voices[line.speaker]!, 165, work, `line-${i}`);
      const start = Math.round(at * ESPEAK_RATE) / ESPEAK_RATE;
      turns.push({ ...line, start, end: start + samples.length / ESPEAK_RATE });
      spoken.push(samples);
      at = turns.at(-1)!.end + options.gap;
    }
    const seconds = Math.ceil((turns.at(-1)!.end + options.tail) * 10) / 10;
    const total = Math.round(seconds * ESPEAK_RATE);
    const audio = new Float32Array(total);
    const own = voices.map(() => new Float32Array(total));
    turns.forEach((turn, i) => {
      const from = Math.round(turn.start * ESPEAK_RATE);
      spoken[i]!.forEach((v, j) => {
        audio[from + j] = (audio[from + j] ?? 0) + v * 0.5;
        own[turn.speaker]![from + j] = v;
      });
    });
    const frames = Math.ceil(seconds * options.fps) + 1;
    const hop = ESPEAK_RATE / options.fps;
    const mouths = own.map((voice) => {
      const rms = new Float32Array(frames);
      for (let n = 0; n < frames; n++) {
        const from = Math.max(0, Math.round((n - 0.5) * hop));
        const to = Math.min(voice.length, Math.round((n + 0.5) * hop));
        let sum = 0;
        for (let i = from; i < to; i++) sum += voice[i]! ** 2;
        rms[n] = to > from ? Math.sqrt(sum / (to - from)) : 0;
      }
      const loud = [...rms].filter((v) => v > 0).sort((a, b) => a - b);
      const reference = loud[Math.floor(loud.length * 0.9)] ?? 1;
      return rms.map((v) => {
        const open = Math.min(1, v / reference);
        return open < 0.1 ? 0 : open;
      });
    });
    return { seconds, audio, turns, mouths };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
