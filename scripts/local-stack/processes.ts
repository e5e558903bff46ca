/**
 * Child processes of the local stack (wrangler dev, the engine, one-off
 * commands). Each runs in its own process group so that stopping it also
 * stops what it spawned (workerd under wrangler, ffmpeg under the engine).
 * Output goes to a log file and, when asked, to this terminal with a
 * `[name]` prefix; the last lines are kept in memory for error messages.
 */
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { dirname } from "node:path";

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Appended to; none: the output is only echoed (if asked) and kept for `tail()`. */
  logFile?: string;
  /** Also print each output line on this process's stdout, prefixed `[echo] `. */
  echo?: string;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string | undefined;
  /** Resolves with the exit code (null when killed by a signal or when it could not start). */
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
const ECHO_COLORS = ["\x1b[36m", "\x1b[35m", "\x1b[33m", "\x1b[32m"];
let echoCount = 0;
const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Last resort when the parent exits without stopping its children: no orphan wrangler, workerd or engine. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) signalGroup(child.pid, "SIGKILL");
  });
}

function echoPrefix(label: string): string {
  if (!process.stdout.isTTY) return `[${label}] `;
  const color = ECHO_COLORS[echoCount++ % ECHO_COLORS.length]!;
  return `${color}[${label}]\x1b[0m `;
}

export function startProcess(spec: ProcessSpec): ManagedProcess {
  let log: WriteStream | undefined;
  if (spec.logFile) {
    mkdirSync(dirname(spec.logFile), { recursive: true });
    log = createWriteStream(spec.logFile, { flags: "a" });
    log.write(`\n--- ${new Date().toISOString()} ${spec.command} ${spec.args.join(" ")}\n`);
  }
  const prefix = spec.echo === undefined ? undefined : echoPrefix(spec.echo);
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let logOpen = log !== undefined;
  const closeLog = (last: string): void => {
    if (!logOpen) return;
    logOpen = false;
    log?.end(last);
  };
  const recent: string[] = [];
  const keep = (line: string): void => {
    recent.push(line);
    if (recent.length > KEPT_LINES) recent.splice(0, recent.length - KEPT_LINES);
    if (prefix !== undefined) process.stdout.write(`${prefix}${line}\n`);
  };
  // stdout and stderr each keep their own unfinished last line.
  const partials = new Map<NodeJS.ReadableStream, string>();
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    partials.set(stream, "");
    // Decoded per stream, so a character split across chunks stays whole.
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      if (logOpen) log?.write(chunk);
      const lines = ((partials.get(stream) ?? "") + chunk).split("\n");
      partials.set(stream, lines.pop() ?? "");
      for (const line of lines) keep(line);
    });
    stream.on("end", () => {
      const rest = partials.get(stream) ?? "";
      partials.set(stream, "");
      if (rest !== "") keep(rest);
    });
  }

  let running = child.pid !== undefined;
  const finish = (): void => {
    running = false;
    live.delete(managed);
  };
  // The log closes once the output pipes do: they can deliver lines after the exit.
  child.on("close", (code) => {
    closeLog(`--- exited with ${code ?? "signal"}\n`);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on("exit", (code) => {
      finish();
      resolve(code);
    });
    child.on("error", (error) => {
      finish();
      recent.push(`could not start ${spec.command}: ${error.message}`);
      if (prefix !== undefined) process.stdout.write(`${prefix}could not start ${spec.command}: ${error.message}\n`);
      closeLog(`--- could not start: ${error.message}\n`);
      resolve(null);
    });
  });

  // A spawn failure (no pid) is reported through `exited` and `tail()`.
  const pid = child.pid ?? -1;
  const managed: ManagedProcess = {
    name: spec.name,
    pid,
    logFile: spec.logFile,
    exited,
    isRunning: () => running,
    tail: (lines = 30) => [...recent, ...partials.values()].filter((l) => l !== "").slice(-lines).join("\n"),
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
      if (running) signalGroup(pid, "SIGKILL");
    },
  };
  if (running) {
    live.add(managed);
    installExitHook();
  }
  return managed;
}

/** Runs a command to its end; resolves with its exit code (null: killed or not started). */
export function runToCompletion(spec: ProcessSpec): Promise<number | null> {
  return startProcess(spec).exited;
}
