import { mkdir, mkdtemp, rm } from "node:fs/promises";
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
