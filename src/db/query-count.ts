/**
 * A counting view of a D1 binding: every statement that reaches the database
 * (one per first/all/run/raw call, one per statement of a batch) is counted,
 * and those that write (INSERT, UPDATE, DELETE, REPLACE) are counted again as
 * writes. Used where the cost of a path in D1 queries is measured: the
 * Workers-pool tests, and `npm run bench:api` through the D1_QUERY_COUNT
 * switch (src/http/d1-query-header.ts). Production never wraps its binding.
 */
export interface D1Counts {
  queries: number;
  writes: number;
}

const WRITE = /^\s*(?:WITH\b[\s\S]*?\)\s*)?(INSERT|UPDATE|DELETE|REPLACE)\b/i;

function count(counts: D1Counts, sql: string): void {
  counts.queries += 1;
  if (WRITE.test(sql)) counts.writes += 1;
}

const EXECUTING = new Set<PropertyKey>(["first", "all", "run", "raw"]);

/** The real statement behind each counted one, for batch(). */
const realStatements = new WeakMap<D1PreparedStatement, { real: D1PreparedStatement; sql: string }>();

function countedStatement(real: D1PreparedStatement, sql: string, counts: D1Counts): D1PreparedStatement {
  const counted = new Proxy(real, {
    get(target, property) {
      if (property === "bind") {
        return (...values: unknown[]) => countedStatement(target.bind(...values), sql, counts);
      }
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (EXECUTING.has(property)) {
        return (...args: unknown[]) => {
          count(counts, sql);
          return method.apply(target, args);
        };
      }
      return method.bind(target);
    },
  });
  realStatements.set(counted, { real, sql });
  return counted;
}

export function countingD1(db: D1Database, counts: D1Counts): D1Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare") {
        return (sql: string) => countedStatement(target.prepare(sql), sql, counts);
      }
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          const reals = statements.map((statement) => {
            const known = realStatements.get(statement);
            if (known) count(counts, known.sql);
            return known?.real ?? statement;
          });
          return target.batch(reals);
        };
      }
      if (property === "exec") {
        return (sql: string) => {
          count(counts, sql);
          return target.exec(sql);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The env with its DB binding counted into `counts`. */
export function withCountedD1(env: Env, counts: D1Counts): Env {
  return { ...env, DB: countingD1(env.DB, counts) };
}
