/**
 * One JSON line per event on stdout (stderr for errors), so a container log
 * collector can index by job_id without parsing free text.
 */
export type LogFields = Record<string, string | number | boolean | undefined | null | readonly Record<string, string | number>[]>;

type Level = "info" | "warn" | "error";
const RANK: Record<Level, number> = { info: 0, warn: 1, error: 2 };

/** ENGINE_LOG_LEVEL=warn|error quiets the chatter (tests); "silent" turns logging off. */
function enabled(level: Level): boolean {
  const wanted = process.env.ENGINE_LOG_LEVEL?.trim().toLowerCase();
  if (wanted === "silent") return false;
  if (wanted === "warn" || wanted === "error") return RANK[level] >= RANK[wanted];
  return true;
}

function write(level: Level, event: string, fields: LogFields): void {
  if (!enabled(level)) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, event, ...fields });
  if (level === "error") process.stderr.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}

export const log = {
  info: (event: string, fields: LogFields = {}) => write("info", event, fields),
  warn: (event: string, fields: LogFields = {}) => write("warn", event, fields),
  error: (event: string, fields: LogFields = {}) => write("error", event, fields),
};
