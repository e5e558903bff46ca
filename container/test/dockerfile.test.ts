import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:net";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ENGINE_PORT } from "../../src/engine/contract.ts";
import { osTempDir, removeTempDirs } from "./helpers/media.ts";
import { waitFor } from "./helpers/servers.ts";

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
    expect(dockerfile).toMatch(new RegExp(`HEALTHCHECK[\\s\\S]*127\\.0\\.0\\.1:${ENGINE_PORT}/health`));
    expect(dockerfile).toMatch(new RegExp(`PORT=${ENGINE_PORT}`));
  });

  it("runs as a non-root user and installs yt-dlp outside the distribution's package", () => {
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).not.toBe("root");
    expect(users.length).toBeGreaterThan(0);
    expect(dockerfile).toMatch(/pip install[^\n]*yt-dlp/);
    expect(dockerfile).not.toMatch(/apt-get install[^\n]*\byt-dlp\b/);
  });

  it("installs the font burned captions are drawn with", () => {
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bfonts-dejavu-core\b/);
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
    expect(copies.map((c) => c[1]?.trim())).toEqual(["dist/server.mjs"]);
  });

  it("starts from the bundle alone, answers /health, and exits cleanly on SIGTERM", async () => {
    execFileSync("npm", ["run", "--silent", "build:engine"], { cwd: root, stdio: "pipe" });
    const port = await freePort();
    const workDir = await osTempDir("bundle-work");
    // Run from an empty directory so nothing outside the bundle can be picked up.
    const child = spawn(process.execPath, [path.join(root, "container/dist/server.mjs")], {
      cwd: workDir,
      env: { PATH: process.env.PATH, PORT: String(port), HOST: "127.0.0.1", WORK_DIR: workDir, YTDLP_PATH: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      let health: unknown;
      await waitFor(async () => {
        health = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json(), () => undefined);
        return health !== undefined;
      }, 20_000, "the bundled engine to answer");
      expect(health).toEqual({ ok: true, backend: "native", active_jobs: 0 });
      expect(output).toMatch(/"event":"engine_started".*"backend":"native"/);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(output).toMatch(/engine_stopped/);
  });
});

afterAll(removeTempDirs);
