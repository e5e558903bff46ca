/**
 * The speech model loader's fallback: when the native runtime cannot be
 * imported (no binary for the platform), it reports why instead of throwing,
 * and the analysis runs on loudness.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

afterEach(() => {
  vi.doUnmock("onnxruntime-node");
  vi.resetModules();
});

describe("loadSpeechModel", () => {
  it("loads the packaged model on this machine", async () => {
    const { loadSpeechModel } = await import("../src/analyse/speech-model.ts");
    const loaded = await loadSpeechModel();
    expect("model" in loaded && loaded.model.name).toBe("silero-vad-v5");
  });

  it("reports the runtime as unavailable when its native binary cannot load", async () => {
    vi.resetModules();
    vi.doMock("onnxruntime-node", () => {
      throw new Error("onnxruntime_binding.node: cannot open shared object file");
    });
    const { loadSpeechModel } = await import("../src/analyse/speech-model.ts");
    const loaded = await loadSpeechModel();
    expect(loaded).toEqual({ unavailable: expect.stringMatching(/^the native ONNX runtime did not load: ./) });
    // Cached: a failed load is not retried on every job.
    expect(await loadSpeechModel()).toBe(loaded);
  });
});
