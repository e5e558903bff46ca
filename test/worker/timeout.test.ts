/**
 * withTimeout (src/lib/timeout.ts), the bound on every engine exchange and
 * Workers AI call: it leaves no timer armed once the call settled (workerd
 * caps a context's active timers at 10,000), and a call that never answers
 * is rejected and its signal aborted when the time is up.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { withTimeout } from "../../src/lib/timeout.ts";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("withTimeout", () => {
  it("answers what the call answered and leaves no timer armed, whether it resolved or threw", async () => {
    expect(await withTimeout(30_000, async () => "answer")).toBe("answer");
    expect(vi.getTimerCount()).toBe(0);
    await expect(withTimeout(30_000, async () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects a call that never answers when the time is up, and aborts its signal", async () => {
    let seen: AbortSignal | undefined;
    const pending = withTimeout(5_000, (signal) => {
      seen = signal;
      return new Promise<never>(() => undefined);
    });
    const outcome = expect(pending).rejects.toThrow("no answer within 5000 ms");
    expect(seen?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(5_000);
    await outcome;
    expect(seen?.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
