/**
 * The image's figures, printed beside the previous run's (kept under
 * .tmp/image/figures.json), so a change that grows the image or slows its
 * start shows up the next time someone runs `npm run test:image`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export interface ImageFigures {
  at: string;
  imageBytes: number;
  buildSeconds: number;
  /** From `podman run` to the first 200 from /health. */
  startToHealthSeconds?: number;
  base: string;
  ytdlp: string;
}

function previous(file: string): ImageFigures | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as ImageFigures;
  } catch {
    return undefined;
  }
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;

export function reportFigures(file: string, current: ImageFigures, say: (line: string) => void): void {
  const before = previous(file);
  const beside = (now: string, then: string | undefined): string => (then === undefined ? now : `${now} (previous run: ${then})`);
  say(`figures: image ${beside(mb(current.imageBytes), before && mb(before.imageBytes))}`);
  say(`figures: build ${beside(`${current.buildSeconds.toFixed(0)} s`, before && `${before.buildSeconds.toFixed(0)} s`)} (base ${current.base}, yt-dlp from ${current.ytdlp})`);
  if (current.startToHealthSeconds !== undefined) {
    const then = before?.startToHealthSeconds;
    say(`figures: podman run to /health ${beside(`${current.startToHealthSeconds.toFixed(2)} s`, then === undefined ? undefined : `${then.toFixed(2)} s`)}`);
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(current, null, 2)}\n`);
}
