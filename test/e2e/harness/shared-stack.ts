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
