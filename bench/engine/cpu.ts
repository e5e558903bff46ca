/**
 * CPU seconds from /proc (Linux), so the bench can compare work done as well
 * as wall time: on a machine shared with other load, CPU time moves much less
 * than wall time. Clock ticks are 100 per second on Linux (getconf CLK_TCK).
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

/** utime, stime, cutime, cstime of a process, in seconds (fields 14-17 of /proc/<pid>/stat). */
function times(pid: number | "self"): { own: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces; the fields after it are counted from its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const at = (field: number) => Number(fields[field - 3]) / TICKS_PER_SECOND;
  return { own: at(14) + at(15), children: at(16) + at(17) };
}

/** CPU used so far by the processes this one started and that have exited (ffmpeg runs of the floor). */
export function exitedChildrenCpuSeconds(): number {
  return times("self").children;
}

/** CPU used so far by a process and its exited children (the engine and its ffmpeg runs). */
export function processTreeCpuSeconds(pid: number): number {
  const t = times(pid);
  return t.own + t.children;
}

/**
 * CPU used so far by a process and every live process under it (with what
 * their exited children used): the Worker's wrangler and workerd, the engine
 * and its running ffmpeg. The difference across a job is the job's CPU.
 */
export function liveTreeCpuSeconds(rootPid: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // Gone while we looked.
    }
  }
  const inTree = (pid: number): boolean => {
    for (let at: number | undefined = pid, hops = 0; at !== undefined && at > 1 && hops < 64; at = parents.get(at), hops++) {
      if (at === rootPid) return true;
    }
    return false;
  };
  let total = 0;
  for (const pid of parents.keys()) {
    if (!inTree(pid)) continue;
    try {
      const t = times(pid);
      total += t.own + t.children;
    } catch {
      // Gone while we looked: its CPU moves to its parent's children count.
    }
  }
  return total;
}
