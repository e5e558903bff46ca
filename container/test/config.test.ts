import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ENGINE_PORT } from "#contract";
import { defaultRenderConcurrency, loadConfig } from "../src/config.ts";

const SECRET = "a-secret-of-exactly-thirty-two-b";

describe("loadConfig", () => {
  it("defaults to the contract's port, a temp work dir of that port and a 2 s progress heartbeat", () => {
    const config = loadConfig({ PATH: "/nonexistent", ENGINE_SECRET: SECRET });
    expect(config.port).toBe(ENGINE_PORT);
    expect(config.workDir).toBe(path.join(os.tmpdir(), `clipjobs-engine-${ENGINE_PORT}`));
    expect(loadConfig({ PATH: "/nonexistent", PORT: "9001", ENGINE_SECRET: SECRET }).workDir).toBe(path.join(os.tmpdir(), "clipjobs-engine-9001"));
    expect(config.progressHeartbeatMs).toBe(2000);
    expect(config.ytdlpPath).toBeNull();
  });

  it("reads the environment and refuses nonsense values", () => {
    const config = loadConfig({ PORT: "9000", WORK_DIR: "/var/work", DOWNLOAD_STALL_TIMEOUT_SECONDS: "12", PATH: "", ENGINE_SECRET: SECRET });
    expect(config.port).toBe(9000);
    expect(config.workDir).toBe("/var/work");
    expect(config.downloadStallTimeoutMs).toBe(12_000);
    expect(() => loadConfig({ PORT: "eighty", ENGINE_SECRET: SECRET })).toThrow(/PORT must be a positive number/);
    expect(() => loadConfig({ PROGRESS_HEARTBEAT_SECONDS: "-1", ENGINE_SECRET: SECRET })).toThrow(/PROGRESS_HEARTBEAT_SECONDS/);
  });

  it("refuses to start without an ENGINE_SECRET of at least 32 bytes", () => {
    expect(() => loadConfig({ PATH: "" })).toThrow(/ENGINE_SECRET is not set/);
    expect(() => loadConfig({ PATH: "", ENGINE_SECRET: SECRET.slice(1) })).toThrow(/at least 32 bytes/);
    expect(loadConfig({ PATH: "", ENGINE_SECRET: SECRET }).engineSecret).toBe(SECRET);
  });

  it("listens on loopback and refuses private hosts unless its environment says otherwise", () => {
    const config = loadConfig({ PATH: "", ENGINE_SECRET: SECRET });
    expect(config.host).toBe("127.0.0.1");
    expect(config.allowPrivateHosts).toBe(false);
    expect(config.callbackBase).toBe("http://clipjobs.internal");
    const local = loadConfig({ PATH: "", ENGINE_SECRET: SECRET, HOST: "0.0.0.0", ALLOW_PRIVATE_SOURCES: "true", CALLBACK_BASE: "http://127.0.0.1:8787/" });
    expect(local).toMatchObject({ host: "0.0.0.0", allowPrivateHosts: true, callbackBase: "http://127.0.0.1:8787" });
    expect(() => loadConfig({ PATH: "", ENGINE_SECRET: SECRET, CALLBACK_BASE: "http://user:pw@worker.example/x" })).toThrow(/CALLBACK_BASE/);
  });
});

describe("ENGINE_RENDER_CONCURRENCY", () => {
  it("defaults to one render below 4 cores and two from 4, and takes a whole number from 1 to 8", () => {
    expect([1, 2, 3, 4, 8, 64].map(defaultRenderConcurrency)).toEqual([1, 1, 1, 2, 2, 2]);
    expect(loadConfig({ PATH: "", ENGINE_SECRET: SECRET }).renderConcurrency).toBe(defaultRenderConcurrency(os.availableParallelism()));
    expect(loadConfig({ PATH: "", ENGINE_SECRET: SECRET, ENGINE_RENDER_CONCURRENCY: "2" }).renderConcurrency).toBe(2);
    for (const bad of ["0", "1.5", "9", "two", "-1"]) {
      expect(() => loadConfig({ PATH: "", ENGINE_SECRET: SECRET, ENGINE_RENDER_CONCURRENCY: bad })).toThrow(/ENGINE_RENDER_CONCURRENCY must be a whole number from 1 to 8/);
    }
  });
});
