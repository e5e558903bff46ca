/**
 * A counting view of a D1 binding: every statement that reaches the database
 * (one per first/all/run/raw call, one per statement of a batch) is counted,
 * and those that write (INSERT, UPDATE, DELETE, REPLACE) are counted again as
 * writes. Used where the cost of a path in D1 queries is measured: the
 * Workers-pool tests, and the local benches through the D1_QUERY_COUNT
 * switch (src/http/d1-query-header.ts). Production never wraps its binding.
 */
export interface D1Counts {
  queries: number;
  writes: number;
}

/** Running totals with the written tables named (the benches' per-job breakdown). */
export interface D1Tally extends D1Counts {
  writesByTable: Record<string, number>;
}

const WRITE = /^\s*(?:WITH\b[\s\S]*?\)\s*)?(INSERT|UPDATE|DELETE|REPLACE)\b/i;
const WRITTEN_TABLE = /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+["`]?(\w+)/i;

/** Receives the SQL of every statement that reaches D1. */
type Sink = (sql: string, writes: boolean) => void;

function countInto(counts: D1Counts): Sink {
  return (_sql, writes) => {
    counts.queries += 1;
    if (writes) counts.writes += 1;
  };
}

function tallyInto(tally: D1Tally): Sink {
  return (sql, writes) => {
    tally.queries += 1;
    if (!writes) return;
    tally.writes += 1;
    const table = WRITTEN_TABLE.exec(sql)?.[1]?.toLowerCase() ?? "unknown";
    tally.writesByTable[table] = (tally.writesByTable[table] ?? 0) + 1;
  };
}

function count(sinks: readonly Sink[], sql: string): void {
  const writes = WRITE.test(sql);
  for (const sink of sinks) sink(sql, writes);
}

const EXECUTING = new Set<PropertyKey>(["first", "all", "run", "raw"]);

/** The real statement behind each counted one, for batch(). */
const realStatements = new WeakMap<D1PreparedStatement, { real: D1PreparedStatement; sql: string }>();

function countedStatement(real: D1PreparedStatement, sql: string, sinks: readonly Sink[]): D1PreparedStatement {
  const counted = new Proxy(real, {
    get(target, property) {
      if (property === "bind") {
        return (...values: unknown[]) => countedStatement(target.bind(...values), sql, sinks);
      }
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (EXECUTING.has(property)) {
        return (...args: unknown[]) => {
          count(sinks, sql);
          return method.apply(target, args);
        };
      }
      return method.bind(target);
    },
  });
  realStatements.set(counted, { real, sql });
  return counted;
}

function countingD1(db: D1Database, sinks: readonly Sink[]): D1Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare") {
        return (sql: string) => countedStatement(target.prepare(sql), sql, sinks);
      }
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          const reals = statements.map((statement) => {
            const known = realStatements.get(statement);
            if (known) count(sinks, known.sql);
            return known?.real ?? statement;
          });
          return target.batch(reals);
        };
      }
      if (property === "exec") {
        return (sql: string) => {
          count(sinks, sql);
          return target.exec(sql);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The env with its DB binding counted into `counts` (and into each of `tallies`). */
export function withCountedD1(env: Env, counts: D1Counts, ...tallies: D1Tally[]): Env {
  return { ...env, DB: countingD1(env.DB, [countInto(counts), ...tallies.map(tallyInto)]) };
}

/** The env with its DB binding tallied into `tally` only. */
export function withTalliedD1(env: Env, tally: D1Tally): Env {
  return { ...env, DB: countingD1(env.DB, [tallyInto(tally)]) };
}

interface CountSwitch {
  D1_QUERY_COUNT?: string;
}

/** The D1_QUERY_COUNT switch (src/http/d1-query-header.ts): local benches only, off unless set. */
export function countsD1Queries(env: Env): boolean {
  return (env as Env & CountSwitch).D1_QUERY_COUNT === "header";
}

export interface D1Totals extends D1Tally {
  engineCallbacks: number;
}

/** The running totals of this isolate since it started: requests, waitUntil work and queue batches alike. */
export const isolateD1Totals: D1Totals = { queries: 0, writes: 0, writesByTable: {}, engineCallbacks: 0 };

/** A queue batch's (or a Durable Object's) D1 statements go into the isolate's totals. */
export function withD1Totals(env: Env): Env {
  return withTalliedD1(env, isolateD1Totals);
}
