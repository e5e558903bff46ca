/** Counts generated requests per endpoint and the statuses seen, for the summary printed after each suite. */
export class Tally {
  private readonly rows = new Map<string, Map<number, number>>();

  record(endpoint: string, status: number): void {
    const statuses = this.rows.get(endpoint) ?? new Map<number, number>();
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    this.rows.set(endpoint, statuses);
  }

  count(endpoint: string): number {
    let total = 0;
    for (const n of this.rows.get(endpoint)?.values() ?? []) total += n;
    return total;
  }

  print(title: string): void {
    const table = [...this.rows].map(([endpoint, statuses]) => ({
      endpoint,
      requests: this.count(endpoint),
      statuses: [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}x${n}`).join(" "),
    }));
    // workerd has no console.table: a plain text table.
    const width = Math.max(8, ...table.map((row) => row.endpoint.length));
    const lines = table.map((row) => `${row.endpoint.padEnd(width)}  ${String(row.requests).padStart(6)}  ${row.statuses}`);
    console.log([`\n${title}`, `${"endpoint".padEnd(width)}  ${"count".padStart(6)}  statuses (status x count)`, ...lines].join("\n"));
  }
}
