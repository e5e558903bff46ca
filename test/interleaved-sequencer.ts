/**
 * The order test files start in when two run at once (vitest.config.ts,
 * maxWorkers 2): vitest's own order within each project (longest first from
 * the last run's durations, else largest file first), the two projects taken
 * in turn. A Workers-pool file mostly keeps one core busy; a node file
 * mostly waits on ffmpeg, a local stack or a browser; side by side they fill
 * two cores better than two of a kind, and no project waits for the other to
 * finish before it starts.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

export class InterleavedSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const byProject = new Map<string, TestSpecification[]>();
    for (const file of sorted) {
      const list = byProject.get(file.project.name) ?? [];
      list.push(file);
      byProject.set(file.project.name, list);
    }
    const lists = [...byProject.values()];
    const out: TestSpecification[] = [];
    for (let i = 0; out.length < sorted.length; i += 1) {
      for (const list of lists) if (i < list.length) out.push(list[i]!);
    }
    return out;
  }
}
