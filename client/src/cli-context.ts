/** What every command of the command line gets: the client, the terminal, the parsed options and its arguments. */
import type { parseArgs } from "node:util";
import type { ClipjobsClient } from "./client.ts";

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** True when stderr is a terminal: progress bars then redraw one line. */
  interactive: boolean;
  env: Record<string, string | undefined>;
}

export const OPTIONS = {
  type: { type: "string" },
  config: { type: "string" },
  "captions-url": { type: "string" },
  prompt: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  "remove-silence": { type: "string" },
  "remove-fillers": { type: "boolean" },
  "keep-fillers": { type: "boolean" },
  language: { type: "string" },
  "caption-language": { type: "string" },
  wait: { type: "boolean" },
  download: { type: "string" },
  json: { type: "boolean" },
  status: { type: "string" },
  limit: { type: "string" },
  format: { type: "string" },
  output: { type: "string", short: "o" },
  events: { type: "string" },
  description: { type: "string" },
  start: { type: "string" },
  end: { type: "string" },
  word: { type: "string", multiple: true },
  title: { type: "string" },
  snap: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

export interface Context {
  client: ClipjobsClient;
  io: Io;
  values: Values;
  args: string[];
}

/** A mistake in how the command was called: printed with the command's help, exit status 2. */
export class UsageError extends Error {}

export function printJson(io: Io, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

export function exactlyOne(args: string[], what: string): string {
  if (args.length !== 1) throw new UsageError(`expected exactly one ${what}`);
  return args[0]!;
}

/** --limit as a whole number, or undefined when not given. */
export function limitOption(values: Values): number | undefined {
  if (values.limit === undefined) return undefined;
  const limit = Number(values.limit);
  if (!Number.isInteger(limit)) throw new UsageError("--limit must be a whole number");
  return limit;
}
