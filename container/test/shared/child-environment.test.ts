/**
 * What the processes that parse attacker-supplied media (ffmpeg, ffprobe,
 * yt-dlp) inherit from the engine: the minimal environment of spawn.ts and
 * nothing else, so no key or token reaches them whatever the engine's own
 * environment holds. Shown on a real job, with ffmpeg and ffprobe wrapped
 * by scripts that record their environment before they run.
 */
import { chmod, readdir, readFile, writeFile } from "node:fs/promises";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig } from "#contract";
import { cachedMedia } from "../../../test/media/generate.ts";
import { chooseBackend } from "../../src/ffmpeg/index.ts";
import { createNativeRunner } from "../../src/ffmpeg/native.ts";
import { proxyEnvironment } from "../../src/source/ytdlp.ts";
import { CHILD_ENVIRONMENT, childEnvironment, runProcess } from "../../src/shared/spawn.ts";
import { newJobId, postJson, startJobBody, startTestEngine, TEST_VERIFY_KEY } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { FFMPEG, FFPROBE, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

const ONE_CLIP: ClipConfig = ClipConfig.parse({ aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, captions: "off" });
/** Secrets a careless environment might hold: none may reach a child. */
const PLANTED = {
  ENGINE_VERIFY_KEY: TEST_VERIFY_KEY,
  ENGINE_SECRET: "old-shared-engine-secret-0123456789abcdef",
  CALLBACK_TOKEN_SECRET: "callback-token-secret-0123456789abcdef",
  ENGINE_SIGNING_KEY: "MC4CAQAwBQYDK2VwBCIEINIBHIrBPWTIDIv+izQzLRzmQESvxaiBolup+xAyI9QZ",
  CLIPJOBS_API_KEY: "cj_live_planted_0123456789",
};
/** Variables a shell adds to its own environment when it runs the wrapper. */
const SHELL_OWN = new Set(["PWD", "SHLVL", "_", "OLDPWD"]);

const planted: string[] = [];
beforeAll(() => {
  for (const [name, value] of Object.entries(PLANTED)) {
    if (process.env[name] === undefined) planted.push(name);
    process.env[name] = value;
  }
});
afterAll(async () => {
  for (const name of planted) delete process.env[name];
  await removeTempDirs();
});

function parseEnv(text: string): Map<string, string> {
  return new Map(text.split("\n").filter(Boolean).map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
}

function expectClean(env: Map<string, string>, secrets: readonly string[]): void {
  for (const name of env.keys()) if (!SHELL_OWN.has(name)) expect(CHILD_ENVIRONMENT as readonly string[]).toContain(name);
  const all = [...env.values()].join("\n");
  for (const secret of secrets) expect(all).not.toContain(secret);
}

describe("a child process's environment", () => {
  it("holds only the minimal variables, whatever the engine's environment holds", async () => {
    const result = await runProcess({ command: process.execPath, args: ["-e", "process.stdout.write(JSON.stringify(process.env))"], timeoutMs: 10_000 });
    const env = new Map(Object.entries(JSON.parse(result.stdout) as Record<string, string>));
    expect(env.get("PATH")).toBe(process.env.PATH);
    expectClean(env, Object.values(PLANTED));
    expect(childEnvironment({ PATH: "/bin", ENGINE_VERIFY_KEY: "k", FOO: "x" })).toEqual({ PATH: "/bin" });
  });

  it("yt-dlp's adds only its egress proxy", () => {
    const env = proxyEnvironment("http://127.0.0.1:9999");
    expect(env.http_proxy).toBe("http://127.0.0.1:9999");
    const rest = new Map(Object.entries(env).filter(([name]) => !/^(http|https|all|no)_proxy$/i.test(name)) as [string, string][]);
    expectClean(rest, Object.values(PLANTED));
  });

  describe("on a real job", () => {
    const tokens = new Map<string, string>();
    let worker: FakeWorker;
    let source: RecordingServer;
    let dumps: string;

    beforeAll(async () => {
      const media = await cachedMedia({ durationSeconds: 12, audio: "speech", bursts: [6], sceneChanges: [5], seed: 3 });
      const size = (await stat(media.path)).size;
      source = await startRecordingServer((_req, res) => {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
        createReadStream(media.path).pipe(res);
      });
      dumps = await osTempDir("child-env");
      worker = await startFakeWorker(tokens, await osTempDir("child-env-uploads"));
    });
    afterAll(async () => {
      await worker?.close();
      await source?.close();
    });

    /** A script that records its environment, then runs the real program (the dump directory is written into it: its environment cannot carry it). */
    async function wrapper(name: string, real: string): Promise<string> {
      const file = path.join(dumps, `${name}-wrapper.sh`);
      await writeFile(file, `#!/bin/sh\nenv > "${dumps}/${name}-$$.env"\nexec "${real}" "$@"\n`);
      await chmod(file, 0o755);
      return file;
    }

    it("the engine's check of its ffmpeg and ffprobe at start sees no key either", async () => {
      const choice = await chooseBackend({ env: { PATH: process.env.PATH, FFMPEG_PATH: await wrapper("version-ffmpeg", FFMPEG), FFPROBE_PATH: await wrapper("version-ffprobe", FFPROBE) } });
      expect(choice.backend).toBe("native");
      const files = (await readdir(dumps)).filter((name) => name.startsWith("version-") && name.endsWith(".env"));
      expect(files.some((name) => name.startsWith("version-ffmpeg-"))).toBe(true);
      expect(files.some((name) => name.startsWith("version-ffprobe-"))).toBe(true);
      for (const file of files) expectClean(parseEnv(await readFile(path.join(dumps, file), "utf8")), Object.values(PLANTED));
    });

    it("ffmpeg and ffprobe see neither the job's token nor any key", async () => {
      const runner = createNativeRunner({ ffmpegPath: await wrapper("ffmpeg", FFMPEG), ffprobePath: await wrapper("ffprobe", FFPROBE) });
      const engine = await startTestEngine(await osTempDir("child-env-engine"), { runner }, { callbackBase: worker.base });
      try {
        const jobId = newJobId("childenv");
        const token = `tok_${jobId}_child_environment_secret`;
        tokens.set(jobId, token);
        expect((await postJson(`${engine.base}/jobs`, startJobBody({ jobId, token, videoUrl: source.url("/talk.mp4"), config: ONE_CLIP }))).status).toBe(202);
        await waitFor(() => worker.callsFor(jobId).some((c) => c.kind === "complete" || c.kind === "fail"), 60_000, "the job to end");
        expect(worker.callsFor(jobId, "complete")).toHaveLength(1);
        const files = (await readdir(dumps)).filter((name) => name.endsWith(".env"));
        expect(files.some((name) => name.startsWith("ffprobe-"))).toBe(true);
        expect(files.some((name) => name.startsWith("ffmpeg-"))).toBe(true);
        for (const file of files) expectClean(parseEnv(await readFile(path.join(dumps, file), "utf8")), [token, ...Object.values(PLANTED)]);
      } finally {
        await engine.close();
      }
    });
  });
});
