import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import path from "node:path";

/** A job's private directory: every file of the job lives here and goes with it. */
export interface WorkDir {
  readonly path: string;
  file(name: string): string;
  remove(): Promise<void>;
}

export async function createWorkDir(root: string, jobId: string): Promise<WorkDir> {
  await mkdir(root, { recursive: true });
  // mkdtemp adds a random suffix, so a re-delivered job never shares a directory
  // with a run of the same job that is still being torn down.
  const dir = await mkdtemp(path.join(root, `${jobId}-`));
  return {
    path: dir,
    file: (name) => path.join(dir, path.basename(name)),
    remove: () => rm(dir, { recursive: true, force: true, maxRetries: 3 }),
  };
}

/**
 * Removes the job directories an earlier engine process left behind: a crash
 * or SIGKILL skips each job's own cleanup. Called once at start, before the
 * server accepts a job, so nothing in `root` can belong to a running job (the
 * default root is per port, and two engines cannot share a port).
 */
export async function removeStaleWorkDirs(root: string): Promise<number> {
  let names: string[];
  try {
    names = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() && e.name.startsWith("job_")).map((e) => e.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  await Promise.all(names.map((name) => rm(path.join(root, name), { recursive: true, force: true, maxRetries: 3 })));
  return names.length;
}
