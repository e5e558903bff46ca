import { readdir, stat } from "node:fs/promises";
import path from "node:path";

/**
 * Watches how much a download has written into its work directory and calls
 * `onOverCap` once the total passes `maxBytes`. yt-dlp's own --max-filesize
 * only compares one response's Content-Length, so chunked responses and
 * fragmented (HLS/DASH) downloads would otherwise be uncapped until it exits.
 *
 * Counted: every file in the directory except yt-dlp's metadata
 * (`*.info.json`) and the merger's output (`*.temp.*`), which is a copy of
 * fragments already counted.
 */
export const WATCH_INTERVAL_MS = 200;

function counted(name: string): boolean {
  return !name.endsWith(".info.json") && !/\.temp\.[^.]+$/.test(name);
}

export async function writtenBytes(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  const sizes = await Promise.all(
    entries
      .filter((entry) => entry.isFile() && counted(entry.name))
      .map((entry) => stat(path.join(dir, entry.name)).then((s) => s.size, () => 0)),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
}

export interface WrittenBytesWatch {
  stop(): void;
  /** A last look, after the download ended. */
  overCap(): Promise<boolean>;
}

export function watchWrittenBytes(dir: string, maxBytes: number, onOverCap: () => void): WrittenBytesWatch {
  let stopped = false;
  let fired = false;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    if (stopped) return;
    if ((await writtenBytes(dir)) > maxBytes && !fired) {
      fired = true;
      onOverCap();
      return;
    }
    if (!stopped) timer = setTimeout(() => void look(), WATCH_INTERVAL_MS);
  };
  timer = setTimeout(() => void look(), WATCH_INTERVAL_MS);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
    async overCap() {
      return fired || (await writtenBytes(dir)) > maxBytes;
    },
  };
}
