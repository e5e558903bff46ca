import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ENGINE_PORT } from "#contract";
import { defaultRenderConcurrency, loadConfig } from "../../src/shared/config.ts";

/** The Worker's public key, as the engine gets it: it verifies and cannot sign. */
const KEY = "tp8EprDXDsleEpximlZXhS0igYQJplSjj5vWRvDO60M";

describe("loadConfig", () => {
  it("defaults to the contract's port, a temp work dir of that port and a 2 s progress heartbeat", () => {
    const config = loadConfig({ PATH: "/nonexistent", ENGINE_VERIFY_KEY: KEY });
    expect(config.port).toBe(ENGINE_PORT);
    expect(config.workDir).toBe(path.join(os.tmpdir(), `clipjobs-engine-${ENGINE_PORT}`));
    expect(loadConfig({ PATH: "/nonexistent", PORT: "9001", ENGINE_VERIFY_KEY: KEY }).workDir).toBe(path.join(os.tmpdir(), "clipjobs-engine-9001"));
    expect(config.progressHeartbeatMs).toBe(2000);
    expect(config.ytdlpPath).toBeNull();
  });

  it("reads the environment and refuses nonsense values", () => {
    const config = loadConfig({ PORT: "9000", WORK_DIR: "/var/work", DOWNLOAD_STALL_TIMEOUT_SECONDS: "12", PATH: "", ENGINE_VERIFY_KEY: KEY });
    expect(config.port).toBe(9000);
    expect(config.workDir).toBe("/var/work");
    expect(config.downloadStallTimeoutMs).toBe(12_000);
    expect(() => loadConfig({ PORT: "eighty", ENGINE_VERIFY_KEY: KEY })).toThrow(/PORT must be a positive number/);
    expect(() => loadConfig({ PROGRESS_HEARTBEAT_SECONDS: "-1", ENGINE_VERIFY_KEY: KEY })).toThrow(/PROGRESS_HEARTBEAT_SECONDS/);
  });

  it("refuses to start without an ENGINE_VERIFY_KEY that is a 32-byte Ed25519 public key", () => {
    expect(() => loadConfig({ PATH: "" })).toThrow(/ENGINE_VERIFY_KEY is not set/);
    expect(() => loadConfig({ PATH: "", ENGINE_VERIFY_KEY: KEY.slice(4) })).toThrow(/32-byte Ed25519 public key/);
    // A shared secret (the old ENGINE_SECRET) is no key at all here.
    expect(() => loadConfig({ PATH: "", ENGINE_VERIFY_KEY: "a-secret-of-exactly-thirty-two-b" })).toThrow(/32-byte Ed25519 public key/);
    expect(loadConfig({ PATH: "", ENGINE_VERIFY_KEY: KEY }).engineVerifyKey).toBe(KEY);
  });

  it("listens on loopback and refuses private hosts unless its environment says otherwise", () => {
    const config = loadConfig({ PATH: "", ENGINE_VERIFY_KEY: KEY });
    expect(config.host).toBe("127.0.0.1");
    expect(config.allowPrivateHosts).toBe(false);
    expect(config.callbackBase).toBe("http://clipjobs.internal");
    const local = loadConfig({ PATH: "", ENGINE_VERIFY_KEY: KEY, HOST: "0.0.0.0", ALLOW_PRIVATE_SOURCES: "true", CALLBACK_BASE: "http://127.0.0.1:8787/" });
    expect(local).toMatchObject({ host: "0.0.0.0", allowPrivateHosts: true, callbackBase: "http://127.0.0.1:8787" });
    expect(() => loadConfig({ PATH: "", ENGINE_VERIFY_KEY: KEY, CALLBACK_BASE: "http://user:pw@worker.example/x" })).toThrow(/CALLBACK_BASE/);
  });
});

describe("ENGINE_RENDER_CONCURRENCY", () => {
  it("defaults to one render below 4 cores and two from 4, and takes a whole number from 1 to 8", () => {
    expect([1, 2, 3, 4, 8, 64].map(defaultRenderConcurrency)).toEqual([1, 1, 1, 2, 2, 2]);
    expect(loadConfig({ PATH: "", ENGINE_VERIFY_KEY: KEY }).renderConcurrency).toBe(defaultRenderConcurrency(os.availableParallelism()));
    expect(loadConfig({ PATH: "", ENGINE_VERIFY_KEY: KEY, ENGINE_RENDER_CONCURRENCY: "2" }).renderConcurrency).toBe(2);
    for (const bad of ["0", "1.5", "9", "two", "-1"]) {
      expect(() => loadConfig({ PATH: "", ENGINE_VERIFY_KEY: KEY, ENGINE_RENDER_CONCURRENCY: bad })).toThrow(/ENGINE_RENDER_CONCURRENCY must be a whole number from 1 to 8/);
    }
  });
});
