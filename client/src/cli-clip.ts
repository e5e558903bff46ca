/**
 * `clipjobs clip edit|add`: edit a completed job's clip (a new version is
 * rendered) or cut a new one from its source, printing the accepted clip;
 * with --wait, until its edit is done (edit null) or failed.
 */
import type { ClipAddBody, ClipAnswer, ClipEditBody } from "./client.ts";
import { printJson, UsageError, type Context, type Io, type Values } from "./cli-context.ts";
import { clock, seconds } from "./format.ts";

export const CLIP_HELP = `clipjobs clip edit <job_id> <index> [--start T] [--end T] [--word N=TEXT]... [--title TEXT] [--wait] [--json]
clipjobs clip add <job_id> --from T --to T [--snap] [--title TEXT] [--wait] [--json]

  edit: renders clip <index> (0: the best) again as a new version.
    --start, --end  a new span in the source (seconds, mm:ss or h:mm:ss), to extend or trim
    --word N=TEXT   caption word N (its index in the clip's words: clipjobs clip edit --json shows them) reads TEXT; repeatable
    --title         a new title
  add: cuts a new clip from the source over --from..--to; --snap moves each edge to the nearest sentence boundary (within 2 s).
  Both cost one credit per started minute of the clip, and print the clip as accepted.
  --wait      poll the clip until its new version is published (or the edit failed: exit status 1)
  --json      print the clip as JSON
`;

/** How often --wait reads the clip. */
const POLL_MS = 2000;

function time(text: string | undefined, option: string): number | undefined {
  if (text === undefined) return undefined;
  const value = seconds(text);
  if (value === null) throw new UsageError(`${option} takes seconds, mm:ss or h:mm:ss`);
  return value;
}

function indexArg(text: string | undefined): number {
  if (text === undefined || !/^\d{1,2}$/.test(text)) throw new UsageError("expected a job id and a clip index (0, 1, ...)");
  return Number(text);
}

/** --word N=TEXT (repeatable) as corrections by index. */
function wordFixes(values: Values): NonNullable<ClipEditBody["words"]> {
  return (values.word ?? []).map((spec) => {
    const match = /^(\d+)=(.+)$/s.exec(spec);
    if (!match) throw new UsageError("--word takes N=TEXT, e.g. --word 3=Kubernetes");
    return { index: Number(match[1]), text: match[2]! };
  });
}

function describe(clip: ClipAnswer): string {
  const state = clip.edit === null ? "published" : clip.edit.status === "failed" ? `edit failed: ${clip.edit.error?.code ?? "error"}: ${clip.edit.error?.message ?? ""}` : `edit ${clip.edit.status}`;
  const lines = [
    `clip ${clip.index}  version ${clip.version}  ${state}`,
    `  ${clock(clip.start_seconds)}-${clock(clip.end_seconds)}  ${clip.title ?? ""}`.trimEnd(),
  ];
  if (clip.url) lines.push(`  ${clip.url}`);
  return `${lines.join("\n")}\n`;
}

function show(io: Io, values: Values, clip: ClipAnswer): void {
  if (values.json) printJson(io, clip);
  else io.stdout(describe(clip));
}

/** Reads the clip until its edit is done or failed; 1 for a failed edit. */
async function waitForClip({ client, io, values }: Context, jobId: string, index: number): Promise<number> {
  for (;;) {
    const clip = await client.getClip(jobId, index);
    if (clip.edit === null || clip.edit.status === "failed") {
      show(io, values, clip);
      return clip.edit === null ? 0 : 1;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function edit(context: Context): Promise<number> {
  const { client, io, values, args } = context;
  if (args.length !== 3) throw new UsageError("expected a job id and a clip index");
  const jobId = args[1]!;
  const index = indexArg(args[2]);
  const body: ClipEditBody = {};
  const start = time(values.start, "--start");
  const end = time(values.end, "--end");
  if (start !== undefined) body.start_seconds = start;
  if (end !== undefined) body.end_seconds = end;
  const words = wordFixes(values);
  if (words.length > 0) body.words = words;
  if (values.title !== undefined) body.title = values.title;
  if (Object.keys(body).length === 0) throw new UsageError("give at least one of --start, --end, --word, --title");
  const accepted = await client.editClip(jobId, index, body);
  if (values.wait) return waitForClip(context, jobId, accepted.index);
  show(io, values, accepted);
  return 0;
}

async function add(context: Context): Promise<number> {
  const { client, io, values, args } = context;
  if (args.length !== 2) throw new UsageError("expected a job id");
  const jobId = args[1]!;
  const start = time(values.from, "--from");
  const end = time(values.to, "--to");
  if (start === undefined || end === undefined) throw new UsageError("add needs --from and --to");
  const body: ClipAddBody = { start_seconds: start, end_seconds: end };
  if (values.snap) body.snap = true;
  if (values.title !== undefined) body.title = values.title;
  const accepted = await client.addClip(jobId, body);
  if (values.wait) return waitForClip(context, jobId, accepted.index);
  show(io, values, accepted);
  return 0;
}

export async function clip(context: Context): Promise<number> {
  const action = context.args[0];
  if (action === "edit") return edit(context);
  if (action === "add") return add(context);
  throw new UsageError("expected clip edit or clip add");
}
