import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createWorkDir, removeStaleWorkDirs } from "../../src/shared/workdir.ts";

const roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempRoot(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "clipjobs-workdir-test-"));
  roots.push(dir);
  return dir;
}

describe("work directories", () => {
  it("gives each run of a job its own directory and removes it whole", async () => {
    const root = await tempRoot();
    const [first, second] = await Promise.all([createWorkDir(root, "job_abc"), createWorkDir(root, "job_abc")]);
    expect(first.path).not.toBe(second.path);
    await writeFile(first.file("source.mp4"), "x");
    await first.remove();
    expect(await readdir(root)).toEqual([path.basename(second.path)]);
  });

  it("removes job directories left by a killed engine, and nothing else", async () => {
    const root = await tempRoot();
    const left = await createWorkDir(root, "job_left1234567890abcd");
    await writeFile(left.file("source.mp4"), "partial download");
    await mkdir(path.join(root, "not-a-job"));
    await writeFile(path.join(root, "job_file_not_dir"), "x");

    expect(await removeStaleWorkDirs(root)).toBe(1);
    expect((await readdir(root)).sort()).toEqual(["job_file_not_dir", "not-a-job"]);
  });

  it("treats a missing root as empty", async () => {
    const root = await tempRoot();
    expect(await removeStaleWorkDirs(path.join(root, "never-made"))).toBe(0);
  });
});
