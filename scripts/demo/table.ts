/** The closing table of clips, as plain text that reads well in a terminal or a log. */
import type { ClipView } from "../local-stack/api-client.ts";

function clock(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${(seconds - minutes * 60).toFixed(1).padStart(4, "0")}`;
}

/** Titles longer than this are shortened in the table (the API has the whole line). */
const TITLE_COLUMN = 48;

function titleCell(title: string | null | undefined): string {
  if (!title) return "-";
  return title.length > TITLE_COLUMN ? `${title.slice(0, TITLE_COLUMN - 1)}…` : title;
}

export function clipTable(clips: ClipView[]): string {
  const rows = clips.map((clip, index) => [
    String(index + 1),
    `${clock(clip.start_seconds)}-${clock(clip.end_seconds)}`,
    `${clip.duration_seconds.toFixed(1)} s`,
    clip.score.toFixed(2),
    titleCell(clip.title),
    clip.reasons.join(", "),
    clip.url,
  ]);
  const header = ["#", "Start-End", "Duration", "Score", "Title", "Reasons", "URL"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const render = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [render(header), render(widths.map((w) => "-".repeat(w))), ...rows.map(render)].join("\n");
}
