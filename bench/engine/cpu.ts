/**
 * CPU seconds from /proc (Linux), so the bench can compare work done as well
 * as wall time: on a machine shared with other load, CPU time moves much less
 * than wall time. Clock ticks are 100 per second on Linux (getconf CLK_TCK).
 */
import { readFileSync } from "node:fs";

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
