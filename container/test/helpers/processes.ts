import { readdir, readFile } from "node:fs/promises";

/** ffmpeg/ffprobe processes whose parent is this test process (Linux /proc); given `mentioning`, only those whose command line holds it (a job id: its work dir). */
export async function ffmpegChildren(mentioning?: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, "utf8");
      const name = /^Name:\s+(\S+)/m.exec(status)?.[1];
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
      const state = /^State:\s+(\S)/m.exec(status)?.[1];
      if (ppid !== process.pid || state === "Z" || (name !== "ffmpeg" && name !== "ffprobe")) continue;
      // One job's own: its work dir (named after the job) is in the command line.
      if (mentioning !== undefined && !(await readFile(`/proc/${entry}/cmdline`, "utf8")).includes(mentioning)) continue;
      found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}
