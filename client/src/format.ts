/** Plain-text rendering for the command line: tables, durations, the progress bar. */

export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** 83.5 -> "1:23.5" */
export function clock(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  const rest = seconds - minutes * 60;
  return `${minutes}:${rest.toFixed(1).padStart(4, "0")}`;
}

export function progressBar(percent: number, width = 30): string {
  const clamped = Math.max(0, Math.min(100, Math.round(percent)));
  const filled = Math.round((clamped / 100) * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(clamped).padStart(3)}%`;
}

/** "90", "1:30", "1:02:03.5" -> seconds (the inverse of clock()); null when it is none of these. */
export function seconds(text: string): number | null {
  const parts = text.trim().split(":");
  if (parts.length > 3 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) return null;
  const values = parts.map(Number);
  if (values.slice(1).some((v) => v >= 60) || values.slice(0, -1).some((v) => !Number.isInteger(v))) return null;
  return values.reduce((total, v) => total * 60 + v, 0);
}
