import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ENGINE_PORT } from "../../src/engine/contract.ts";
import { loadConfig } from "../src/config.ts";

describe("loadConfig", () => {
  it("defaults to the contract's port, a temp work dir of that port and a 2 s progress heartbeat", () => {
    const config = loadConfig({ PATH: "/nonexistent" });
    expect(config.port).toBe(ENGINE_PORT);
    expect(config.workDir).toBe(path.join(os.tmpdir(), `clipjobs-engine-${ENGINE_PORT}`));
    expect(loadConfig({ PATH: "/nonexistent", PORT: "9001" }).workDir).toBe(path.join(os.tmpdir(), "clipjobs-engine-9001"));
    expect(config.progressHeartbeatMs).toBe(2000);
    expect(config.ytdlpPath).toBeNull();
  });

  it("reads the environment and refuses nonsense values", () => {
    const config = loadConfig({ PORT: "9000", WORK_DIR: "/var/work", DOWNLOAD_STALL_TIMEOUT_SECONDS: "12", PATH: "" });
    expect(config.port).toBe(9000);
    expect(config.workDir).toBe("/var/work");
    expect(config.downloadStallTimeoutMs).toBe(12_000);
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT must be a positive number/);
    expect(() => loadConfig({ PROGRESS_HEARTBEAT_SECONDS: "-1" })).toThrow(/PROGRESS_HEARTBEAT_SECONDS/);
  });
});
