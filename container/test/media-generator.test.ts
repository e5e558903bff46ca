import { describe, expect, it } from "vitest";
import { cachedMedia, planMedia, type MediaSpec } from "../../test/media/generate.ts";
import { runProcess } from "../src/shared/spawn.ts";
import { FFMPEG, FFPROBE, ffprobeJson } from "./helpers/media.ts";

const SPEC: MediaSpec = { durationSeconds: 30, bursts: [12], sceneChanges: [9.5, 21], seed: 31 };

describe("test-media generator", () => {
  it("plans the same structure for the same spec, and a different one for another seed", () => {
    expect(planMedia(SPEC)).toEqual(planMedia(SPEC));
    expect(planMedia({ ...SPEC, seed: 32 }).phrases).not.toEqual(planMedia(SPEC).phrases);
  });

  it("writes an H.264/AAC MP4 of the planned size and length, with keyframes on the scene changes", async () => {
    const { path, facts } = await cachedMedia(SPEC);
    const probe = await ffprobeJson(path);
    const video = probe.streams.find((s) => s.codec_type === "video");
    expect(video?.codec_name).toBe("h264");
    expect([video?.width, video?.height]).toEqual([320, 180]);
    expect(probe.streams.find((s) => s.codec_type === "audio")?.codec_name).toBe("aac");
    expect(Number(probe.format.duration)).toBeCloseTo(facts.durationSeconds, 1);
    const keyframes = await runProcess({
      command: FFPROBE,
      args: ["-v", "error", "-skip_frame", "nokey", "-select_streams", "v", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path],
      timeoutMs: 30_000,
    });
    const times = keyframes.stdout.split("\n").filter((l) => l.trim() !== "").map((l) => Number(l.split(",")[0]));
    for (const cut of facts.sceneChanges) expect(times.some((t) => Math.abs(t - cut) < 0.5 / facts.fps)).toBe(true);
  });

  it("plants real silences where the facts say the pauses are, and a loud burst", async () => {
    const { path, facts } = await cachedMedia(SPEC);
    const lines: string[] = [];
    await runProcess({
      command: FFMPEG,
      args: ["-nostdin", "-hide_banner", "-nostats", "-i", path, "-vn", "-af", "silencedetect=noise=-40dB:duration=0.5,volumedetect", "-f", "null", "-"],
      timeoutMs: 30_000,
      onStderrLine: (line) => lines.push(line),
    });
    const starts = lines.flatMap((l) => /silence_start: ([\d.]+)/.exec(l)?.[1] ?? []).map(Number);
    // Pauses are gaps in the speech; a burst planted over one fills it with noise.
    const clear = (p: { start: number; end: number }) => !facts.bursts.some((b) => b.start < p.end && p.start < b.end);
    const longPauses = facts.pauses.filter((p) => p.end - p.start >= 0.6 && clear(p));
    expect(longPauses.length).toBeGreaterThan(2);
    for (const pause of longPauses) expect(starts.some((s) => Math.abs(s - pause.start) < 0.1), `pause at ${pause.start}`).toBe(true);
    const peak = Number(/max_volume: (-?[\d.]+) dB/.exec(lines.join("\n"))?.[1]);
    expect(peak).toBeGreaterThan(-3);
  });
});
