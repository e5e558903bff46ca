/**
 * Test sources with no person in them: a screen recording (lines of code-like
 * text scrolling up, as in a recorded editor or terminal) and a still slide
 * (coloured shapes that never move). A known frame of each can be decoded
 * again to compare with what a rendered clip shows.
 */
import { writeFile } from "node:fs/promises";
import { runProcess } from "../../src/shared/spawn.ts";
import { FFMPEG } from "./media.ts";

const WORDS = ["const", "function", "return", "value", "frame", "camera", "render", "output", "source", "width", "height", "clip", "window", "share", "await"];

/** Deterministic code-like lines (a small linear congruential generator, so every run writes the same text). */
function codeLines(count: number): string {
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const words = Array.from({ length: 3 + next(7) }, () => WORDS[next(WORDS.length)]!);
    lines.push(`${"    ".repeat(next(4))}${words.join(" ")}`);
  }
  return lines.join("\n");
}

async function ffmpeg(args: string[], what: string): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-v", "error", "-y", ...args], timeoutMs: 120_000 });
  if (result.exitCode !== 0) throw new Error(`${what} failed: ${result.stderrTail}`);
}

const ENCODE = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"];

/** Dark text on a light page scrolling up SCROLL_PX pixels a second, with a tone for sound. */
export async function screenRecording(out: string, c: { seconds: number; width: number; height: number; fps: number }): Promise<void> {
  const text = `${out}.txt`;
  await writeFile(text, codeLines(Math.ceil(c.seconds * 2) + 40));
  const scroll = `drawtext=font='DejaVu Sans Mono':textfile='${text}':fontsize=${Math.round(c.height / 26)}:fontcolor=0x202020:x=${Math.round(c.width / 32)}:y='${Math.round(c.height / 18)}-t*${Math.round(c.height / 12)}':line_spacing=4`;
  await ffmpeg(
    ["-f", "lavfi", "-i", `color=c=0xf4f4f4:s=${c.width}x${c.height}:r=${c.fps}:d=${c.seconds}`, "-f", "lavfi", "-i", `sine=frequency=330:duration=${c.seconds}`, "-vf", scroll, ...ENCODE, out],
    "the screen recording",
  );
}

/** A slide that never changes: a dark blue page with three coloured shapes, with a tone for sound. */
export async function stillSlide(out: string, c: { seconds: number; width: number; height: number; fps: number }): Promise<void> {
  const { width: w, height: h } = c;
  const boxes = [
    `drawbox=x=${Math.round(w * 0.06)}:y=${Math.round(h * 0.2)}:w=${Math.round(w * 0.22)}:h=${Math.round(h * 0.5)}:color=0xe03030:t=fill`,
    `drawbox=x=${Math.round(w * 0.4)}:y=${Math.round(h * 0.3)}:w=${Math.round(w * 0.2)}:h=${Math.round(h * 0.3)}:color=0x30c060:t=fill`,
    `drawbox=x=${Math.round(w * 0.72)}:y=${Math.round(h * 0.15)}:w=${Math.round(w * 0.22)}:h=${Math.round(h * 0.6)}:color=0xf0c020:t=fill`,
  ].join(",");
  await ffmpeg(
    ["-f", "lavfi", "-i", `color=c=0x203060:s=${w}x${h}:r=${c.fps}:d=${c.seconds}`, "-f", "lavfi", "-i", `sine=frequency=330:duration=${c.seconds}`, "-vf", boxes, ...ENCODE, out],
    "the slide",
  );
}

/** The same video stored turned a quarter clockwise, with a display rotation that turns it back (as phones store portrait video). */
export async function storedTurned(input: string, out: string): Promise<void> {
  const turned = `${out}.stored.mp4`;
  await ffmpeg(["-i", input, "-vf", "transpose=clock", ...ENCODE, turned], "turning the video");
  await ffmpeg(["-i", turned, "-c", "copy", "-metadata:s:v:0", "rotate=90", out], "tagging the rotation");
}
