/**
 * Entry point of the clip engine (bundled to container/dist/server.mjs): reads
 * the environment, picks the ffmpeg backend, serves the contract's routes and
 * shuts down cleanly on SIGTERM (running jobs are failed with a report).
 */
import { loadConfig } from "./shared/config.ts";
import { errorMessage } from "./shared/errors.ts";
import { createRunner } from "./ffmpeg/index.ts";
import { createEngineServer } from "./http/app.ts";
import { log } from "./shared/log.ts";
import { removeStaleWorkDirs } from "./shared/workdir.ts";

async function main(): Promise<void> {
  // A shared engine secret from an older deployment's environment: the engine holds no secret, so none stays in its environment.
  if (process.env.ENGINE_SECRET !== undefined) {
    delete process.env.ENGINE_SECRET;
    log.warn("engine_secret_ignored", { detail: "ENGINE_SECRET is no longer used; the engine verifies with ENGINE_VERIFY_KEY" });
  }
  const config = loadConfig();
  const staleWorkDirs = await removeStaleWorkDirs(config.workDir);
  const runner = await createRunner();
  const engine = createEngineServer({ config, runner });
  const address = await engine.listen(config.port, config.host);
  log.info("engine_started", {
    address: `${address.address}:${address.port}`,
    backend: runner.backend,
    backend_reason: runner.selectionReason,
    ytdlp: config.ytdlpPath ?? "not installed",
    work_dir: config.workDir,
    stale_work_dirs_removed: staleWorkDirs,
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("engine_stopping", { signal, active_jobs: engine.activeJobs() });
    engine
      .shutdown()
      .then(() => {
        log.info("engine_stopped", {});
        process.exit(0);
      })
      .catch((error: unknown) => {
        log.error("engine_shutdown_failed", { error: errorMessage(error) });
        process.exit(1);
      });
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((error: unknown) => {
  log.error("engine_start_failed", { error: errorMessage(error) });
  process.exit(1);
});
