/**
 * The job's live progress: one redrawn line on a terminal, plain lines (on
 * each step change or 10-point jump) when the output is a file or a pipe.
 */
import type { JobView } from "../local-stack/api-client.ts";

const BAR_WIDTH = 28;

function elapsed(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

export class ProgressDisplay {
  private readonly started = Date.now();
  private lastStep = "";
  private lastProgress = -100;
  private drawn = false;

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {}

  update(job: JobView): void {
    const progress = job.status === "completed" ? 100 : (job.progress ?? 0);
    const step = job.step ?? job.status;
    const time = elapsed(Date.now() - this.started);
    if (this.out.isTTY) {
      const filled = Math.round((progress / 100) * BAR_WIDTH);
      const bar = `${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)}`;
      // A pseudo-terminal may report 0 columns: assume a common width then.
      const width = Math.max(60, (this.out.columns || 100) - 1);
      const line = `  [${bar}] ${String(progress).padStart(3)}%  ${time}  ${step}`.slice(0, width);
      this.out.write(`\r\x1b[2K${line}`);
      this.drawn = true;
    } else if (step !== this.lastStep || progress >= this.lastProgress + 10) {
      this.out.write(`  ${String(progress).padStart(3)}%  ${time}  ${step}\n`);
      this.lastStep = step;
      this.lastProgress = progress;
    }
  }

  /** Ends the redrawn line so later output starts on a fresh one. */
  finish(): void {
    if (this.drawn) this.out.write("\n");
    this.drawn = false;
  }
}
