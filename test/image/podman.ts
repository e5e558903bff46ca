/**
 * podman, as `npm run test:image` drives it. Debian's podman runs containers
 * here with runc only (crun refuses the hybrid cgroup layout) and with
 * explicit limits (the default RLIMIT_NOFILE is not permitted):
 * docs/deploying.md "Testing the image".
 */
import { spawn } from "node:child_process";

export const RUNTIME_FLAGS = ["--runtime", "runc", "--ulimit", "nofile=20000:20000"];
export const RUN_LIMITS = [...RUNTIME_FLAGS, "--ulimit", "nproc=4096:4096"];

export interface PodmanResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `podman args...`; output kept, and echoed line by line when `echo` is given (long builds). */
export function podmanRun(args: string[], options: { echo?: (line: string) => void; timeoutMs?: number } = {}): Promise<PodmanResult> {
  return new Promise((resolve) => {
    const child = spawn("podman", args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const lines = (chunk: Buffer): void => {
      if (options.echo) for (const line of chunk.toString().split("\n")) if (line.trim()) options.echo(line);
    };
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      lines(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      lines(chunk);
    });
    const timer = options.timeoutMs ? setTimeout(() => child.kill("SIGKILL"), options.timeoutMs) : undefined;
    child.on("error", (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on("close", (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `podman args...`, rejecting with podman's own words when it fails; resolves with stdout. */
export async function podman(args: string[], options: { echo?: (line: string) => void; timeoutMs?: number } = {}): Promise<string> {
  const result = await podmanRun(args, options);
  if (result.code !== 0) throw new Error(`podman ${args.join(" ")} exited ${result.code ?? "by a signal"}:\n${(result.stderr || result.stdout).slice(-4000)}`);
  return result.stdout;
}

export async function imageExists(reference: string): Promise<boolean> {
  return (await podmanRun(["image", "exists", reference])).code === 0;
}

/** The image's size as podman counts it (all layers, uncompressed). */
export async function imageBytes(reference: string): Promise<number> {
  return Number((await podman(["image", "inspect", "--format", "{{.Size}}", reference])).trim());
}

/** Whether podman can start a container on this machine at all (CI says so plainly when not). */
export async function podmanUsable(): Promise<{ ok: true } | { ok: false; reason: string }> {
  const version = await podmanRun(["version", "--format", "{{.Client.Version}}"]);
  if (version.code !== 0) return { ok: false, reason: `podman is not installed or does not run: ${version.stderr.trim() || "not found"}` };
  const info = await podmanRun(["info", "--format", "{{.Host.OCIRuntime.Name}}"]);
  if (info.code !== 0) return { ok: false, reason: `podman info failed: ${info.stderr.trim()}` };
  return { ok: true };
}
