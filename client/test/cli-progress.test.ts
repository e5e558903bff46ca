/**
 * The command line's progress output: on a terminal one line redrawn in
 * place (with the time waited), otherwise a line per change of the job and
 * per tenth of an upload.
 */
import { describe, expect, test } from "vitest";
import { jobProgress, uploadProgress } from "../src/cli-progress.ts";
import type { Job } from "../src/client.ts";

function sink(interactive: boolean) {
  const written: string[] = [];
  return { io: { stderr: (text: string) => void written.push(text), interactive }, written };
}

const base = {
  job_id: "job_1",
  video_url: "https://example.com/v.mp4",
  video_type: "podcast",
  config_name: null,
  captions_url: null,
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
} as const;

function active(progress: number, step: string): Job {
  return { ...base, status: "processing", progress, step } as unknown as Job;
}

describe("job progress", () => {
  test("a terminal gets one line, redrawn, with the step and the time waited; the end moves to a new line", () => {
    const { io, written } = sink(true);
    const reporter = jobProgress(io);
    reporter.update(active(10, "Downloading video"));
    reporter.update(active(55, "Rendering clip 2 of 5"));
    reporter.end();
    expect(written).toHaveLength(3);
    expect(written[0]).toMatch(/^\r\x1b\[2K\[###-+\]\s+10%  Downloading video  \(0:0\d\)$/);
    expect(written[1]).toMatch(/^\r\x1b\[2K\[#{17}-{13}\]\s+55%  Rendering clip 2 of 5  \(0:0\d\)$/);
    expect(written[2]).toBe("\n");
  });

  test("a pipe gets a line per change and no redraw", () => {
    const { io, written } = sink(false);
    const reporter = jobProgress(io);
    reporter.update(active(0, "Waiting for a free engine (position 2)"));
    reporter.update({ ...base, status: "completed" } as unknown as Job);
    reporter.end();
    expect(written).toEqual(["[------------------------------]   0%  Waiting for a free engine (position 2)\n", "[##############################] 100%  completed\n"]);
  });
});

describe("upload progress", () => {
  test("a pipe gets a line per tenth of the file, ending at 100%", () => {
    const { io, written } = sink(false);
    const reporter = uploadProgress(io, "talk.mp4");
    for (let sent = 0; sent <= 2_000_000; sent += 65_536) reporter.update({ sent, total: 2_000_000 });
    reporter.update({ sent: 2_000_000, total: 2_000_000 });
    expect(written).toHaveLength(11);
    expect(written.at(-1)).toBe("[##############################] 100%  uploading talk.mp4 (2.0 MB of 2.0 MB)\n");
  });

  test("a terminal redraws on every report", () => {
    const { io, written } = sink(true);
    const reporter = uploadProgress(io, "talk.mp4");
    reporter.update({ sent: 1, total: 1000 });
    reporter.update({ sent: 2, total: 1000 });
    expect(written.every((line) => line.startsWith("\r\x1b[2K"))).toBe(true);
    expect(written).toHaveLength(2);
  });
});
