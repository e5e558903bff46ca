/** Test-file side of the shared stack: asks the global setup's control server for it (once per file). */
import { inject } from "vitest";
import type { SharedStackInfo } from "./shared-stack-config.ts";

let pending: Promise<SharedStackInfo> | undefined;

export function sharedStack(): Promise<SharedStackInfo> {
  pending ??= (async () => {
    const response = await fetch(`${inject("e2eControlUrl")}/stack`, { method: "POST" });
    const text = await response.text();
    if (!response.ok) throw new Error(`the shared e2e stack did not start:\n${text}`);
    return JSON.parse(text) as SharedStackInfo;
  })();
  return pending;
}

async function gate(action: "hold" | "held" | "release", jobId: string, clip: number): Promise<void> {
  await sharedStack();
  const response = await fetch(`${inject("e2eControlUrl")}/gate/${action}?job=${encodeURIComponent(jobId)}&clip=${clip}`, { method: "POST" });
  if (!response.ok) throw new Error(`the upload gate did not ${action}: ${response.status} ${await response.text()}`);
}

/**
 * Holds every upload of clip `clip`'s video of this job from now on (the
 * upload gate between the shared stack's engine and Worker): the job cannot
 * complete, and stays processing until it is canceled or its engine stops.
 * Arm it while the job cannot have rendered that clip yet (its source held).
 */
export function holdClipUpload(jobId: string, clip: number): Promise<void> {
  return gate("hold", jobId, clip);
}

/** Resolves once the engine has rendered clip `clip` of this job and its held upload arrived. */
export function clipUploadHeld(jobId: string, clip: number): Promise<void> {
  return gate("held", jobId, clip);
}

/** Lets the held upload of clip `clip` go on (and later ones pass): the job carries on to completion. */
export function releaseClipUpload(jobId: string, clip: number): Promise<void> {
  return gate("release", jobId, clip);
}
