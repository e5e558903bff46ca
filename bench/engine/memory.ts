/**
 * Peak memory from /proc (Linux): the engine server's own peak RSS (VmHWM,
 * tracked by the kernel) and, by sampling, the ffmpeg processes it starts.
 */
import { readdir, readFile } from "node:fs/promises";

interface ProcStatus {
  name: string;
  /** Peak resident set (kB). */
  hwmKb: number;
  rssKb: number;
}

async function status(pid: number): Promise<ProcStatus | null> {
  try {
    const text = await readFile(`/proc/${pid}/status`, "utf8");
    const field = (key: string) => new RegExp(`^${key}:\\s+(\\S+)`, "m").exec(text);
    return {
      name: field("Name")?.[1] ?? "",
      hwmKb: Number(field("VmHWM")?.[1] ?? 0),
      rssKb: Number(field("VmRSS")?.[1] ?? 0),
    };
  } catch {
    return null;
  }
}

/** Direct children of a process, from each of its threads' children list (cheap: no scan of /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const found: number[] = [];
  try {
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const text = await readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "");
      for (const child of text.trim().split(/\s+/)) if (child) found.push(Number(child));
    }
  } catch {
    // The process is gone.
  }
  return found;
}

export async function peakRssMb(pid: number): Promise<number> {
  return ((await status(pid))?.hwmKb ?? 0) / 1024;
}

export interface ChildMemory {
  /** Largest peak RSS of any one ffmpeg process (MB). */
  largestMb: number;
  /** Largest sum of the ffmpeg processes' RSS seen at one moment (MB). */
  concurrentMb: number;
  processes: number;
}

/** Samples the ffmpeg children of `parentPid` every `everyMs` until stopped. */
export function sampleFfmpegChildren(parentPid: number, everyMs = 200): { stop(): Promise<ChildMemory> } {
  const peaks = new Map<number, number>();
  let concurrentKb = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      let sum = 0;
      for (const pid of await childrenOf(parentPid)) {
        const info = await status(pid);
        if (!info || info.name !== "ffmpeg") continue;
        peaks.set(pid, Math.max(peaks.get(pid) ?? 0, info.hwmKb));
        sum += info.rssKb;
      }
      concurrentKb = Math.max(concurrentKb, sum);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return {
        largestMb: Math.max(0, ...peaks.values()) / 1024,
        concurrentMb: concurrentKb / 1024,
        processes: peaks.size,
      };
    },
  };
}
