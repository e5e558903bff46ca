import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export interface Child {
  name: string;
  process: ChildProcess;
  exited: Promise<number>;
}

const COLORS = ["\x1b[36m", "\x1b[35m", "\x1b[33m", "\x1b[32m"];
const RESET = "\x1b[0m";
let colorIndex = 0;

/**
 * Starts a command in its own process group (so stopping it also stops what
 * it started, e.g. wrangler's workerd) with every output line prefixed.
 */
export function startChild(name: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Child {
  const color = process.stdout.isTTY ? COLORS[colorIndex++ % COLORS.length]! : "";
  const prefix = `${color}[${name}]${color ? RESET : ""} `;
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on("line", (line) => process.stdout.write(prefix + line + "\n"));
  }
  const exited = new Promise<number>((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    child.on("error", (err) => {
      process.stdout.write(`${prefix}failed to start: ${err.message}\n`);
      resolve(127);
    });
  });
  return { name, process: child, exited };
}

/** SIGTERM to the child's process group, SIGKILL if it is still there after `graceMs`. */
export async function stopChild(child: Child, graceMs = 5000): Promise<void> {
  const pid = child.process.pid;
  if (pid === undefined || child.process.exitCode !== null || child.process.signalCode !== null) return;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is already gone.
    }
  };
  signalGroup("SIGTERM");
  const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
  await child.exited;
  clearTimeout(timer);
  // Grandchildren may outlive the leader briefly; make sure the group is gone.
  signalGroup("SIGKILL");
}

/** Runs a command to completion with prefixed output; resolves with its exit code. */
export function runToCompletion(name: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<number> {
  return startChild(name, command, args, options).exited;
}
