/**
 * Child processes of the local stack (wrangler dev, the engine). Each runs in
 * its own process group so that stopping it also stops what it spawned
 * (workerd under wrangler, ffmpeg under the engine). Output goes to a log file;
 * the last lines are kept in memory for error messages.
 */
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { dirname } from "node:path";

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  isRunning(): boolean;
  /** The last lines the process wrote, for error messages. */
  tail(lines?: number): string;
  /** SIGTERM to the group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the whole group at once: a crash, as far as anyone else can tell. */
  kill(): void;
}

const KEPT_LINES = 80;
const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Last resort when the parent exits without stopping its children. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) signalGroup(child.pid, "SIGKILL");
  });
}

export function startProcess(spec: ProcessSpec): ManagedProcess {
  mkdirSync(dirname(spec.logFile), { recursive: true });
  const log = createWriteStream(spec.logFile, { flags: "a" });
  log.write(`\n--- ${new Date().toISOString()} ${spec.command} ${spec.args.join(" ")}\n`);
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`${spec.name}: could not start ${spec.command}`);
  const pid = child.pid;
  const recent: string[] = [];
  let partial = "";
  const collect = (chunk: Buffer): void => {
    log.write(chunk);
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) recent.push(line);
    if (recent.length > KEPT_LINES) recent.splice(0, recent.length - KEPT_LINES);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);

  let running = true;
  const exited = new Promise<number | null>((resolve) => {
    child.on("exit", (code) => {
      running = false;
      live.delete(managed);
      log.write(`--- exited with ${code ?? "signal"}\n`);
      log.end();
      resolve(code);
    });
    child.on("error", (error) => {
      running = false;
      live.delete(managed);
      recent.push(`spawn error: ${error.message}`);
      resolve(null);
    });
  });

  const managed: ManagedProcess = {
    name: spec.name,
    pid,
    logFile: spec.logFile,
    exited,
    isRunning: () => running,
    tail: (lines = 30) => [...recent, partial].filter((l) => l !== "").slice(-lines).join("\n"),
    async stop(graceMs = 5000) {
      if (!running) return;
      signalGroup(pid, "SIGTERM");
      const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
      // Grandchildren that ignored SIGTERM go with the group.
      signalGroup(pid, "SIGKILL");
    },
    kill() {
      signalGroup(pid, "SIGKILL");
    },
  };
  live.add(managed);
  installExitHook();
  return managed;
}
