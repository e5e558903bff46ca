/**
 * The media cache's two files (a source and its facts as JSON), written so that test files running at the same
 * time in other processes never read half of either: a maker writes both under names of its own and renames
 * them into place, the facts first, so whoever sees the source finds its facts whole beside it. Two makers of
 * one entry each finish their own copy; the last rename wins with identical content.
 */
import { writeFile, rename } from "node:fs/promises";

/** A name beside `path` that no other maker uses (pid and time: vitest runs test files in parallel processes). */
export function partialPath(path: string, extension = ".mp4"): string {
  return `${path}.${process.pid}.${Date.now()}.partial${extension}`;
}

/** Moves a finished source made at `partial` to `path`, with its facts at `${path}.json`. */
export async function commitCached(partial: string, path: string, facts: unknown): Promise<void> {
  const partialFacts = `${partial}.json`;
  await writeFile(partialFacts, JSON.stringify(facts, null, 2));
  await rename(partialFacts, `${path}.json`);
  await rename(partial, path);
}
