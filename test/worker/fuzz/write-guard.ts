/**
 * Proves that rejected requests write nothing without paying for a snapshot
 * around every request: the stored state is compared with a baseline at
 * checkpoints (before every write the suite expects, every `every` rejected
 * requests, and at the end). A difference means one of the requests since the
 * baseline, all of them rejected, wrote something; they are listed.
 */
import { added, snapshot, type Snapshot } from "./snapshot.ts";

export class WriteGuard {
  private baseline: Snapshot | null = null;
  private sinceBaseline: string[] = [];
  checkpoints = 0;

  constructor(
    private readonly accountIds: readonly string[],
    private readonly every = 100,
  ) {}

  async start(): Promise<void> {
    this.baseline = await snapshot(this.accountIds);
    this.sinceBaseline = [];
  }

  /** Records a rejected request; checks the state every `every` of them. */
  async rejected(description: string): Promise<void> {
    this.sinceBaseline.push(description);
    if (this.sinceBaseline.length >= this.every) await this.check();
  }

  /** Asserts nothing changed since the baseline. */
  async check(): Promise<void> {
    await this.compare([], "checkpoint");
  }

  /**
   * After an accepted request: every change since the baseline must mention
   * one of `markers` (e.g. the new job's id); anything else was written by a
   * rejected request. The new state becomes the baseline.
   */
  async accepted(markers: readonly string[], description: string): Promise<void> {
    await this.compare(markers, description);
  }

  private async compare(markers: readonly string[], description: string): Promise<void> {
    if (!this.baseline) throw new Error("WriteGuard.start() was not called");
    const now = await snapshot(this.accountIds);
    this.checkpoints += 1;
    const changed = [...added(this.baseline.rows, now.rows), ...added(now.rows, this.baseline.rows).map((r) => `-${r}`)];
    const changedObjects = [...added(this.baseline.objects, now.objects), ...added(now.objects, this.baseline.objects).map((o) => `-${o}`)];
    const explained = (item: string) => markers.some((marker) => item.includes(marker));
    const rows = changed.filter((row) => !explained(row));
    const objects = changedObjects.filter((key) => !explained(key));
    if (rows.length > 0 || objects.length > 0) {
      throw new Error(
        `rejected requests changed stored state (at ${description}): rows ${JSON.stringify(rows)}, objects ${JSON.stringify(objects)}; ` +
          `requests since the last checkpoint: ${this.sinceBaseline.slice(-20).join(" | ")}`,
      );
    }
    this.baseline = now;
    this.sinceBaseline = [];
  }
}
