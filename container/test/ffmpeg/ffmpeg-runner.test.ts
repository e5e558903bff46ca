import { execFileSync } from "node:child_process";
import { chmod, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseBackend, createRunner } from "../../src/ffmpeg/index.ts";
import { tempDir } from "../helpers/media.ts";

/** The machine's binaries, as `which` finds them on the test's own PATH. */
const systemFfmpeg = execFileSync("which", ["ffmpeg"], { encoding: "utf8" }).trim();
const systemFfprobe = execFileSync("which", ["ffprobe"], { encoding: "utf8" }).trim();

let dir: string;
/** A PATH with nothing on it. */
let emptyBin: string;
/** A PATH holding only links to the real ffmpeg and ffprobe. */
let linkedBin: string;
/** A PATH whose ffmpeg and ffprobe exist but fail to run. */
let brokenBin: string;

function envWith(vars: Record<string, string>): NodeJS.ProcessEnv {
  return { ...vars };
}

beforeAll(async () => {
  dir = await tempDir("runner-choice");
  emptyBin = path.join(dir, "empty");
  linkedBin = path.join(dir, "linked");
  brokenBin = path.join(dir, "broken");
  await Promise.all([mkdir(emptyBin), mkdir(linkedBin), mkdir(brokenBin)]);
  await symlink(systemFfmpeg, path.join(linkedBin, "ffmpeg"));
  await symlink(systemFfprobe, path.join(linkedBin, "ffprobe"));
  for (const name of ["ffmpeg", "ffprobe"]) {
    const file = path.join(brokenBin, name);
    await writeFile(file, "#!/bin/sh\nexit 3\n");
    await chmod(file, 0o755);
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("ffmpeg backend selection", () => {
  it("uses native ffmpeg found on PATH, and that runner really runs it", async () => {
    const runner = await createRunner({ env: envWith({ PATH: linkedBin }) });
    expect(runner.backend).toBe("native");
    expect(runner.selectionReason).toContain(path.join(linkedBin, "ffmpeg"));
    const probe = await runner.ffprobe({ args: ["-v", "error", "-f", "lavfi", "-show_entries", "stream=width", "-of", "csv=p=0", "testsrc=size=64x48"], inputs: [], outputs: [], timeoutMs: 30_000 });
    expect(probe.stdout.trim()).toBe("64");
  });

  it("uses FFMPEG_PATH and FFPROBE_PATH when PATH has no ffmpeg", async () => {
    const choice = await chooseBackend({ env: envWith({ PATH: emptyBin, FFMPEG_PATH: systemFfmpeg, FFPROBE_PATH: systemFfprobe }) });
    expect(choice).toMatchObject({ backend: "native", binaries: { ffmpegPath: systemFfmpeg, ffprobePath: systemFfprobe } });
  });

  it("falls back to the wasm build when PATH has no ffmpeg, and says why", async () => {
    const runner = await createRunner({ env: envWith({ PATH: emptyBin }) });
    expect(runner.backend).toBe("wasm");
    expect(runner.selectionReason).toMatch(/ffmpeg on PATH not found; using the WebAssembly build/);
    expect(runner.maxSourceBytes).toBeLessThan(1024 ** 3);
  });

  it("falls back to wasm when the binaries found do not run", async () => {
    const choice = await chooseBackend({ env: envWith({ PATH: brokenBin }) });
    expect(choice.backend).toBe("wasm");
    expect(choice.reason).toContain(`${path.join(brokenBin, "ffmpeg")} -version failed`);
  });

  it("falls back to wasm when FFMPEG_PATH names a missing file, even with ffmpeg on PATH", async () => {
    const choice = await chooseBackend({ env: envWith({ PATH: linkedBin, FFMPEG_PATH: path.join(dir, "missing", "ffmpeg") }) });
    expect(choice.backend).toBe("wasm");
    expect(choice.reason).toMatch(/^FFMPEG_PATH \(.*missing\/ffmpeg\) not found/);
  });

  it("runs wasm when ENGINE_FFMPEG_BACKEND=wasm although native ffmpeg is there", async () => {
    const runner = await createRunner({ env: envWith({ PATH: linkedBin, ENGINE_FFMPEG_BACKEND: "wasm" }) });
    expect(runner.backend).toBe("wasm");
    expect(runner.selectionReason).toMatch(/ENGINE_FFMPEG_BACKEND/);
  });

  it("lets the caller's preference win over the environment", async () => {
    const choice = await chooseBackend({ prefer: "native", env: envWith({ PATH: linkedBin, ENGINE_FFMPEG_BACKEND: "wasm" }) });
    expect(choice.backend).toBe("native");
  });

  it("fails loudly when native is forced but missing, and on an unknown backend name", async () => {
    await expect(chooseBackend({ env: envWith({ PATH: emptyBin, ENGINE_FFMPEG_BACKEND: "native" }) })).rejects.toThrow(/native ffmpeg forced by ENGINE_FFMPEG_BACKEND, but ffmpeg on PATH not found/);
    await expect(chooseBackend({ env: envWith({ PATH: linkedBin, ENGINE_FFMPEG_BACKEND: "gpu" }) })).rejects.toThrow(/must be "native" or "wasm"/);
  });
});
