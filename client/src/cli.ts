/**
 * The `clipjobs` command line (client/bin/clipjobs.mjs runs it). Talks to
 * CLIPJOBS_URL (default http://127.0.0.1:8787) with CLIPJOBS_API_KEY through
 * the typed client. Exit status: 0 done, 1 the API refused or the job did not
 * complete, 2 a usage mistake.
 */
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ClipjobsClient, DEFAULT_BASE_URL, type Job, type SubmitJobBody } from "./client.ts";
import { ClipjobsError } from "./errors.ts";
import { clock, progressBar, seconds, table } from "./format.ts";

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** True when stderr is a terminal: the progress bar then redraws one line. */
  interactive: boolean;
  env: Record<string, string | undefined>;
}

const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  interactive: process.stderr.isTTY === true,
  env: process.env,
};

const HELP = `clipjobs: long video in, short ready-to-post clips out.

Usage:
  clipjobs submit <video_url> --type <video_type> [--config NAME] [--prompt TEXT] [--from T --to T] [--remove-silence MODE] [--remove-fillers|--keep-fillers] [--wait] [--download DIR] [--json]
  clipjobs jobs [--status STATUS] [--limit N] [--json]
  clipjobs job <job_id> [--json]
  clipjobs cancel <job_id> [--json]
  clipjobs usage [--json]
  clipjobs configs [--json]
  clipjobs <command> --help

Environment:
  CLIPJOBS_URL       API origin (default ${DEFAULT_BASE_URL})
  CLIPJOBS_API_KEY   your API key (ck_live_...)

Errors print the problem's code and detail; the exit status is 1 (2 for a usage mistake).
`;

const COMMAND_HELP: Record<string, string> = {
  submit: `clipjobs submit <video_url> --type <video_type> [--config NAME] [--prompt TEXT] [--from T --to T] [--remove-silence MODE] [--remove-fillers|--keep-fillers] [--wait] [--download DIR] [--json]

  --type      podcast, lecture, gaming, sports, vlog or general
  --config    a saved configuration (see: clipjobs configs)
  --prompt    clip only moments about this topic, e.g. "the parts about pricing"
  --from, --to  analyse and clip only this part (seconds, mm:ss or h:mm:ss); charged on its length
  --remove-silence  off, pauses or tight: shorten pauses inside each clip
  --remove-fillers, --keep-fillers  cut (or keep) um, uh, erm...
              (steering options left out take the configuration's values)
  --wait      wait for the job, with a progress bar, then list its clips
  --download  with --wait: save every clip into DIR (implies --wait)
  --json      print the job as JSON (the final job with --wait)
`,
  jobs: `clipjobs jobs [--status STATUS] [--limit N] [--json]

  --status    queued, processing, completed, failed, canceled or all (default: completed)
  --limit     1-100 (default 50)
`,
  job: `clipjobs job <job_id> [--json]\n\n  Shows one job, with its clips when it completed.\n`,
  cancel: `clipjobs cancel <job_id> [--json]\n\n  Cancels a queued or processing job.\n`,
  usage: `clipjobs usage [--json]\n\n  Credits of the current period.\n`,
  configs: `clipjobs configs [--json]\n\n  Saved configurations.\n`,
};

const OPTIONS = {
  type: { type: "string" },
  config: { type: "string" },
  prompt: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  "remove-silence": { type: "string" },
  "remove-fillers": { type: "boolean" },
  "keep-fillers": { type: "boolean" },
  wait: { type: "boolean" },
  download: { type: "string" },
  json: { type: "boolean" },
  status: { type: "string" },
  limit: { type: "string" },
  help: { type: "boolean", short: "h" },
} satisfies ParseArgsConfig["options"];

class UsageError extends Error {}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

interface Context {
  client: ClipjobsClient;
  io: Io;
  values: Values;
  args: string[];
}

function json(io: Io, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

function one(args: string[], what: string): string {
  if (args.length !== 1) throw new UsageError(`expected exactly one ${what}`);
  return args[0]!;
}

function clipTable(job: Job): string {
  if (job.status !== "completed") return "";
  if (job.clips.length === 0) return "No clips.";
  // With a prompt, how well each clip matches it (issue 27).
  const prompted = job.clips.some((clip) => clip.prompt_match !== null);
  return table(
    ["#", "start", "end", "length", "score", ...(prompted ? ["match"] : []), "reasons", "url"],
    job.clips.map((clip, i) => [
      String(i + 1),
      clock(clip.start_seconds),
      clock(clip.end_seconds),
      `${clip.duration_seconds.toFixed(1)}s`,
      clip.score.toFixed(2),
      ...(prompted ? [clip.prompt_match === null ? "" : clip.prompt_match.toFixed(2)] : []),
      clip.reasons.join(", "),
      clip.url,
    ]),
  );
}

function describeJob(job: Job): string {
  const lines = [`${job.job_id}  ${job.status}${"title" in job && job.title ? `  "${job.title}"` : ""}`, `  video   ${job.video_url} (${job.video_type})`];
  if (job.status === "queued" || job.status === "processing") lines.push(`  progress ${job.progress}%  ${job.step}`);
  if (job.status === "failed") lines.push(`  error   ${job.error.code}: ${job.error.message}`);
  if (job.status === "completed") lines.push(`  credits ${job.credits_charged}`, "", clipTable(job));
  return `${lines.join("\n")}\n`;
}

/** Redraws one line on a terminal; otherwise one line per change. */
function progressReporter(io: Io): { update: (job: Job) => void; end: () => void } {
  let drawn = false;
  return {
    update(job) {
      const percent = job.status === "queued" || job.status === "processing" ? job.progress : 100;
      const step = job.status === "queued" || job.status === "processing" ? job.step : job.status;
      const line = `${progressBar(percent)}  ${step}`;
      if (io.interactive) {
        io.stderr(`\r\x1b[2K${line}`);
        drawn = true;
      } else {
        io.stderr(`${line}\n`);
      }
    },
    end() {
      if (drawn) io.stderr("\n");
    },
  };
}

async function download(job: Job, dir: string, io: Io): Promise<void> {
  if (job.status !== "completed") return;
  await mkdir(dir, { recursive: true });
  for (const [i, clip] of job.clips.entries()) {
    const response = await fetch(clip.url);
    if (!response.ok || !response.body) throw new ClipjobsError("download_failed", `Clip ${i + 1} answered HTTP ${response.status}.`, response.status);
    const file = join(dir, `${job.job_id}-${String(i + 1).padStart(2, "0")}.mp4`);
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(file));
    io.stderr(`saved ${file}\n`);
  }
}

/** --prompt, --from/--to, --remove-silence, --remove-fillers/--keep-fillers as submission fields (issue 27). */
function steeringOptions(values: Values): Partial<SubmitJobBody> {
  if (values["remove-fillers"] && values["keep-fillers"]) throw new UsageError("give --remove-fillers or --keep-fillers, not both");
  const out: Partial<SubmitJobBody> = {};
  if (values.prompt !== undefined) out.prompt = values.prompt;
  if (values.from !== undefined || values.to !== undefined) {
    if (values.to === undefined) throw new UsageError("--from needs --to");
    const start = values.from === undefined ? 0 : seconds(values.from);
    const end = seconds(values.to);
    if (start === null || end === null) throw new UsageError("--from and --to take seconds, mm:ss or h:mm:ss");
    out.time_range = { start_seconds: start, end_seconds: end };
  }
  // Any text goes to the API, which answers invalid_request naming the allowed values.
  if (values["remove-silence"] !== undefined) out.remove_silence = values["remove-silence"] as SubmitJobBody["remove_silence"];
  if (values["remove-fillers"]) out.remove_fillers = true;
  if (values["keep-fillers"]) out.remove_fillers = false;
  return out;
}

async function submit({ client, io, values, args }: Context): Promise<number> {
  const videoUrl = one(args, "video URL");
  if (!values.type) throw new UsageError("--type is required (podcast, lecture, gaming, sports, vlog or general)");
  const wait = values.wait === true || values.download !== undefined;
  // Any text goes to the API, which answers invalid_video_type naming the allowed values.
  const videoType = values.type as SubmitJobBody["video_type"];
  const submitted = await client.submitJob({
    video_url: videoUrl,
    video_type: videoType,
    ...(values.config ? { config_name: values.config } : {}),
    ...steeringOptions(values),
  });
  if (!wait) {
    if (values.json) json(io, submitted);
    else io.stdout(`${submitted.job_id}  ${submitted.status}\n`);
    return 0;
  }
  if (!values.json) io.stderr(`${submitted.job_id} submitted\n`);
  const reporter = values.json ? null : progressReporter(io);
  const job = await client.waitForJob(submitted.job_id, { onProgress: (j) => reporter?.update(j) });
  reporter?.end();
  if (values.download !== undefined) await download(job, values.download, io);
  if (values.json) json(io, job);
  else io.stdout(describeJob(job));
  return job.status === "completed" ? 0 : 1;
}

async function listJobs({ client, io, values, args }: Context): Promise<number> {
  if (args.length > 0) throw new UsageError("jobs takes no arguments");
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !Number.isInteger(limit)) throw new UsageError("--limit must be a whole number");
  const status = values.status as "all" | Job["status"] | undefined;
  const page = await client.listJobs({ ...(status ? { status } : {}), ...(limit !== undefined ? { limit } : {}) });
  if (values.json) return json(io, page), 0;
  if (page.jobs.length === 0) {
    io.stdout("No jobs.\n");
    return 0;
  }
  io.stdout(`${table(["job_id", "status", "created", "clips", "title"], page.jobs.map((j) => [j.job_id, j.status, j.created_at, String(j.clips_count), j.title ?? ""]))}\n`);
  if (page.next_cursor) io.stdout("(more jobs: raise --limit)\n");
  return 0;
}

async function showJob({ client, io, values, args }: Context): Promise<number> {
  const job = await client.getJob(one(args, "job id"));
  if (values.json) json(io, job);
  else io.stdout(describeJob(job));
  return 0;
}

async function cancel({ client, io, values, args }: Context): Promise<number> {
  const job = await client.cancelJob(one(args, "job id"));
  if (values.json) json(io, job);
  else io.stdout(`${job.job_id}  ${job.status}\n`);
  return 0;
}

async function usage({ client, io, values, args }: Context): Promise<number> {
  if (args.length > 0) throw new UsageError("usage takes no arguments");
  const current = await client.usage();
  if (values.json) return json(io, current), 0;
  io.stdout(
    `${table(["plan", "remaining", "total", "used", "reserved", "period ends"], [
      [current.plan, String(current.credits_remaining), String(current.credits_total), String(current.credits_used), String(current.credits_reserved), current.period_end],
    ])}\n`,
  );
  return 0;
}

async function configs({ client, io, values, args }: Context): Promise<number> {
  if (args.length > 0) throw new UsageError("configs takes no arguments");
  const list = await client.listConfigs();
  if (values.json) return json(io, list), 0;
  if (list.configs.length === 0) {
    io.stdout("No saved configurations.\n");
    return 0;
  }
  const rows = list.configs.map((c) => [c.name, c.aspect_ratio, `${c.resolution}p`, `${c.min_clip_seconds}-${c.max_clip_seconds}s`, String(c.max_clips), c.reframe]);
  io.stdout(`${table(["name", "aspect", "resolution", "length", "clips", "reframe"], rows)}\n`);
  return 0;
}

const COMMANDS: Record<string, (context: Context) => Promise<number>> = { submit, jobs: listJobs, job: showJob, cancel, usage, configs };

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr(`clipjobs: ${error instanceof Error ? error.message : String(error)}\n\n${HELP}`);
    return 2;
  }
  const [command, ...args] = parsed.positionals;
  if (command === undefined || command === "help") {
    io.stdout(HELP);
    return command === undefined && !parsed.values.help ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    io.stderr(`clipjobs: unknown command "${command}"\n\n${HELP}`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout(COMMAND_HELP[command] ?? HELP);
    return 0;
  }
  const client = new ClipjobsClient({ baseUrl: io.env.CLIPJOBS_URL || DEFAULT_BASE_URL, apiKey: io.env.CLIPJOBS_API_KEY });
  try {
    return await run({ client, io, values: parsed.values, args });
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`clipjobs ${command}: ${error.message}\n\n${COMMAND_HELP[command] ?? HELP}`);
      return 2;
    }
    if (error instanceof ClipjobsError) {
      io.stderr(`error: ${error.code}: ${error.detail}\n`);
      for (const field of error.problem?.errors ?? []) {
        if (field.message !== error.detail) io.stderr(`  ${field.path}: ${field.message}\n`);
      }
      return 1;
    }
    throw error;
  }
}
