/**
 * Progress on stderr for the command line. On a terminal one line is redrawn
 * in place; otherwise (a pipe, CI, a test) a line is printed per change of
 * the job, and per tenth of an upload, so logs stay short.
 */
import type { Job } from "./client.ts";
import { progressBar } from "./format.ts";

export interface ProgressIo {
  stderr: (text: string) => void;
  /** True when stderr is a terminal. */
  interactive: boolean;
}

export interface Reporter<T> {
  update: (value: T) => void;
  end: () => void;
}

function lineWriter(io: ProgressIo): { write: (line: string) => void; end: () => void } {
  let drawn = false;
  return {
    write(line) {
      if (io.interactive) {
        io.stderr(`\r\x1b[2K${line}`);
        drawn = true;
      } else {
        io.stderr(`${line}\n`);
      }
    },
    end() {
      if (drawn) io.stderr("\n");
      drawn = false;
    },
  };
}

/** m:ss since `startedAt`. */
function elapsed(startedAt: number, now = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - startedAt) / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

/** A job's progress and step, with the time spent waiting. */
export function jobProgress(io: ProgressIo): Reporter<Job> {
  const writer = lineWriter(io);
  const startedAt = Date.now();
  return {
    update(job) {
      const active = job.status === "queued" || job.status === "processing";
      const percent = active ? job.progress : 100;
      const step = active ? job.step : job.status;
      writer.write(`${progressBar(percent)}  ${step}${io.interactive ? `  (${elapsed(startedAt)})` : ""}`);
    },
    end: writer.end,
  };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** An upload's bytes: redrawn on a terminal, one line per tenth otherwise. */
export function uploadProgress(io: ProgressIo, fileName: string): Reporter<{ sent: number; total: number }> {
  const writer = lineWriter(io);
  let lastTenth = -1;
  return {
    update({ sent, total }) {
      const percent = total > 0 ? (sent / total) * 100 : 100;
      const tenth = Math.floor(percent / 10);
      if (!io.interactive && tenth === lastTenth) return;
      lastTenth = tenth;
      writer.write(`${progressBar(percent)}  uploading ${fileName} (${megabytes(sent)} of ${megabytes(total)})`);
    },
    end: writer.end,
  };
}
