/** The shared e2e stack's settings, and what test files learn about it. */
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalStack, type LocalStack, type StackOptions } from "../../../scripts/local-stack/stack.ts";
import { gateStack, type UploadGate } from "./upload-gate.ts";

export const projectRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

/**
 * Just above the longest source the credit test needs (62 minutes, more than
 * the free plan's 60 credits), so a slightly longer source is too long.
 */
export const E2E_MAX_SOURCE_SECONDS = 3900;

/** What test files learn about the shared stack: its addresses, not its controls. */
export type SharedStackInfo = Pick<LocalStack, "workerUrl" | "cdnUrl" | "engineUrl" | "adminToken" | "engineBackend" | "logsDir"> & {
  maxSourceSeconds: number;
};

const runsDir = join(projectRoot, ".tmp", "e2e", "runs");
/** Logs of runs older than this are removed when a new stack starts. */
const KEEP_LOGS_MS = 24 * 60 * 60 * 1000;

function pruneOldRuns(): void {
  if (!existsSync(runsDir)) return;
  for (const entry of readdirSync(runsDir)) {
    const path = join(runsDir, entry);
    if (Date.now() - statSync(path).mtimeMs > KEEP_LOGS_MS) rmSync(path, { recursive: true, force: true });
  }
}

/**
 * A directory of its own per stack and run, so two runs at once (two
 * terminals, a CI job beside a developer) never share storage. Storage goes
 * when the stack stops; the logs stay for a day, for post-mortems.
 */
export function stackOptions(name: string, vars: Record<string, string>): StackOptions {
  pruneOldRuns();
  return {
    root: projectRoot,
    dir: join(runsDir, `${new Date().toISOString().replace(/[:.]/g, "-")}-${name}-${process.pid}`),
    fresh: true,
    ephemeral: true,
    vars,
    // Reports every second keep the watchdog tests' short silence limit well clear of a healthy job.
    engineEnv: { PROGRESS_HEARTBEAT_SECONDS: "1" },
  };
}

export function describeStack(stack: LocalStack, maxSourceSeconds: number): SharedStackInfo {
  return {
    workerUrl: stack.workerUrl,
    cdnUrl: stack.cdnUrl,
    engineUrl: stack.engineUrl,
    adminToken: stack.adminToken,
    engineBackend: stack.engineBackend,
    logsDir: stack.logsDir,
    maxSourceSeconds,
  };
}

/**
 * The shared stack, with an upload gate between its engine and the Worker
 * (upload-gate.ts): test files hold a clip's upload through the control
 * server (shared-stack.ts) to act while a job is known to be mid-processing.
 */
export async function startSharedStack(): Promise<{ stack: LocalStack; info: SharedStackInfo; gate: UploadGate }> {
  const options = stackOptions("shared", {
    MAX_SOURCE_SECONDS: String(E2E_MAX_SOURCE_SECONDS),
    // Generous: a healthy job on a busy machine must never trip it here.
    ENGINE_SILENCE_TIMEOUT_SECONDS: "60",
    // Test files run side by side on this stack's one engine process; the fleet suite checks a limit of 1.
    ENGINE_MAX_INSTANCES: "4",
    // Webhook retries in seconds instead of hours (test/e2e/webhooks.test.ts).
    WEBHOOK_RETRY_SCALE: "0.001",
  });
  const gate = await gateStack(options);
  const stack = await startLocalStack(options).catch(async (error: unknown) => {
    await gate.close();
    throw error;
  });
  return { stack, info: describeStack(stack, E2E_MAX_SOURCE_SECONDS), gate };
}
