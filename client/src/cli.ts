/**
 * The `clipjobs` command line (client/bin/clipjobs.mjs runs it). Talks to
 * CLIPJOBS_URL (default http://127.0.0.1:8787) with CLIPJOBS_API_KEY through
 * the typed client. Exit status: 0 done, 1 the API refused or the job did not
 * complete, 2 a usage mistake.
 */
import { createWriteStream } from "node:fs";
import { mkdir, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { parseArgs } from "node:util";
import { ClipjobsClient, DEFAULT_BASE_URL, EXPORT_FORMATS, type ExportFormat, type Job, type SubmitJobBody, type TranscriptTextFormat } from "./client.ts";
import { exactlyOne, limitOption, OPTIONS, printJson, UsageError, type Context, type Io, type Values } from "./cli-context.ts";
import { jobProgress, uploadProgress } from "./cli-progress.ts";
import { webhooks, WEBHOOKS_HELP } from "./cli-webhooks.ts";
import { clip, CLIP_HELP } from "./cli-clip.ts";
import { ClipjobsError } from "./errors.ts";
import { clock, seconds, table } from "./format.ts";
import { uploadFile } from "./upload.ts";

export type { Io } from "./cli-context.ts";

const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  interactive: process.stderr.isTTY === true,
  env: process.env,
};

const HELP = `clipjobs: long video in, short ready-to-post clips out.

Usage:
  clipjobs submit <video_url | ./file.mp4> --type <video_type> [--config NAME] [--captions-url URL] [--prompt TEXT] [--from T --to T] [--remove-silence MODE] [--remove-fillers|--keep-fillers] [--language CODE] [--caption-language CODE] [--wait] [--download DIR] [--json]
  clipjobs jobs [--status STATUS] [--limit N] [--json]
  clipjobs job <job_id> [--json]
  clipjobs cancel <job_id> [--json]
  clipjobs transcript <job_id> [--format txt|vtt|srt] [--json]
  clipjobs export <job_id> --format fcpxml|edl|otio|mlt [--output FILE] [--json]
  clipjobs clip edit <job_id> <index> [--start T] [--end T] [--word N=TEXT] [--title TEXT] [--wait] [--json]
  clipjobs clip add <job_id> --from T --to T [--snap] [--title TEXT] [--wait] [--json]
  clipjobs download <job_id> [DIR] [--json]
  clipjobs usage [--json]
  clipjobs configs [--json]
  clipjobs webhooks list|add|remove|test|deliveries [...] [--json]
  clipjobs <command> --help

Environment:
  CLIPJOBS_URL        API origin (default ${DEFAULT_BASE_URL})
  CLIPJOBS_API_KEY    your API key (ck_live_...)
  CLIPJOBS_STATE_DIR  where unfinished uploads are remembered (default ~/.local/state/clipjobs)

Errors print the problem's code and detail (with --json: the problem document, on stderr);
the exit status is 1 (2 for a usage mistake).
`;

const COMMAND_HELP: Record<string, string> = {
  submit: `clipjobs submit <video_url | ./file.mp4> --type <video_type> [--config NAME] [--captions-url URL] [--prompt TEXT] [--from T --to T] [--remove-silence MODE] [--remove-fillers|--keep-fillers] [--language CODE] [--caption-language CODE] [--wait] [--download DIR] [--json]

  A local file is uploaded first (tus, resumable: after an interruption, run the
  same command again and the upload continues where it stopped), then submitted.

  --type      podcast, lecture, gaming, sports, vlog or general
  --config    a saved configuration (see: clipjobs configs)
  --captions-url  an SRT or WebVTT file of the speech, used when the video has no better transcript
  --prompt    clip only moments about this topic, e.g. "the parts about pricing"
  --from, --to  analyse and clip only this part (seconds, mm:ss or h:mm:ss); charged on its length
  --remove-silence  off, pauses or tight: shorten pauses inside each clip
  --remove-fillers, --keep-fillers  cut (or keep) um, uh, erm...
  --language  the language spoken (ISO 639-1, e.g. en, de, ja), a hint for speech-to-text;
              auto: detect it
  --caption-language  translate captions and clip text into this language (ISO 639-1);
              spoken: keep the spoken language
              (options left out here take the configuration's values)
  --wait      wait for the job, with a progress bar and its current step, then list its clips
  --download  with --wait: save every clip into DIR (implies --wait)
  --json      print the job as JSON (the final job with --wait); no progress output
`,
  jobs: `clipjobs jobs [--status STATUS] [--limit N] [--json]

  --status    queued, processing, completed, failed, canceled or all (default: completed)
  --limit     1-100 (default 50)
`,
  job: `clipjobs job <job_id> [--json]\n\n  Shows one job, with its clips when it completed.\n`,
  cancel: `clipjobs cancel <job_id> [--json]\n\n  Cancels a queued or processing job.\n`,
  transcript: `clipjobs transcript <job_id> [--format txt|vtt|srt] [--json]

  What is said in a completed job's video.
  --format    txt: one sentence per line (default); vtt: WebVTT; srt: SubRip
  --json      words and sentences with their times, as JSON (with --format: {job_id, format, content})
`,
  export: `clipjobs export <job_id> --format fcpxml|edl|otio|mlt [--output FILE] [--json]

  A completed job's clips as a timeline for a video editor, against the source video:
  fcpxml (Final Cut Pro, DaVinci Resolve), edl (CMX 3600: Premiere, Resolve),
  otio (OpenTimelineIO) or mlt (Shotcut, Kdenlive). Each clip's in and out in the source,
  its crop (keyframed where the camera moves; not in edl) and its caption files.
  --output, -o  write the file here and print its path (default: print the file)
  --json      {job_id, format, content} (or {job_id, format, file} with --output)
`,
  download: `clipjobs download <job_id> [DIR] [--json]

  Saves a completed job's clips (and their caption files, when it has them)
  into DIR (default: the current directory) as <job_id>-01.mp4, ...; prints each path.
`,
  usage: `clipjobs usage [--json]\n\n  Credits of the current period.\n`,
  configs: `clipjobs configs [--json]\n\n  Saved configurations.\n`,
  webhooks: WEBHOOKS_HELP,
  clip: CLIP_HELP,
};

const TRANSCRIPT_FORMATS: readonly TranscriptTextFormat[] = ["txt", "vtt", "srt"];

function clipTable(job: Job): string {
  if (job.status !== "completed") return "";
  if (job.clips.length === 0) return "No clips.";
  // With a prompt, how well each clip matches it.
  const prompted = job.clips.some((clip) => clip.prompt_match !== null);
  // A model's sub-scores (hook/payoff/standalone/energy) and title, when a model judged the clips.
  const judged = job.clips.some((clip) => clip.judged_by === "model");
  const clips = table(
    ["#", "start", "end", "length", "score", ...(prompted ? ["match"] : []), ...(judged ? ["h/p/s/e", "title"] : []), "reasons", "url"],
    job.clips.map((clip, i) => [
      String(i + 1),
      clock(clip.start_seconds),
      clock(clip.end_seconds),
      `${clip.duration_seconds.toFixed(1)}s`,
      clip.score.toFixed(2),
      ...(prompted ? [clip.prompt_match === null ? "" : clip.prompt_match.toFixed(2)] : []),
      ...(judged ? [clip.scores ? `${clip.scores.hook}/${clip.scores.payoff}/${clip.scores.standalone}/${clip.scores.energy}` : "", clip.title ?? ""] : []),
      clip.reasons.join(", "),
      clip.url,
    ]),
  );
  const judgement = job.judgement ? `judged by ${job.judgement.judged_by === "model" ? (job.judgement.model ?? "a model") : "signals"}${job.judgement.fallback_reason ? ` (${job.judgement.fallback_reason})` : ""}` : "";
  const chapters = job.chapters.map((chapter) => `  ${clock(chapter.start_seconds)}  ${chapter.title}`);
  return [clips, ...(judgement ? ["", judgement] : []), ...(chapters.length > 0 ? ["", "chapters", ...chapters] : [])].join("\n");
}

function describeJob(job: Job): string {
  const lines = [`${job.job_id}  ${job.status}${"title" in job && job.title ? `  "${job.title}"` : ""}`, `  video   ${job.video_url ?? `upload ${job.upload_id ?? ""}`} (${job.video_type})`];
  if (job.status === "queued" || job.status === "processing") lines.push(`  progress ${job.progress}%  ${job.step}`);
  if (job.status === "failed") lines.push(`  error   ${job.error.code}: ${job.error.message}`);
  if (job.status === "completed") lines.push(`  credits ${job.credits_charged}`, "", clipTable(job));
  return `${lines.join("\n")}\n`;
}

async function saveUrl(url: string, file: string): Promise<void> {
  const response = await fetch(url);
  if (!response.ok || !response.body) throw new ClipjobsError("download_failed", `${url} answered HTTP ${response.status}.`, response.status);
  await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(file));
}

/** Saves every clip of a completed job (and its caption files) into `dir`; returns the paths. */
async function downloadClips(job: Job, dir: string): Promise<string[]> {
  if (job.status !== "completed") {
    throw new ClipjobsError("job_not_completed", `Job ${job.job_id} is ${job.status}; only a completed job has clips to download.`, null);
  }
  await mkdir(dir, { recursive: true });
  const saved: string[] = [];
  for (const [i, clip] of job.clips.entries()) {
    const stem = join(dir, `${job.job_id}-${String(i + 1).padStart(2, "0")}`);
    const files: [string, string][] = [[clip.url, `${stem}.mp4`]];
    if (clip.captions) files.push([clip.captions.vtt_url, `${stem}.vtt`], [clip.captions.srt_url, `${stem}.srt`]);
    for (const [url, file] of files) {
      await saveUrl(url, file);
      saved.push(file);
    }
  }
  return saved;
}

/** --prompt, --from/--to, --remove-silence, --remove-fillers/--keep-fillers as submission fields. */
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

/**
 * --language and --caption-language as submission fields. The
 * words auto and spoken send null, which overrides a configuration's language
 * with "detected" or "as spoken"; any other text goes to the API, which answers
 * unsupported_language naming the allowed values.
 */
function languageOptions(values: Values): Partial<SubmitJobBody> {
  const out: Partial<SubmitJobBody> = {};
  const language = values.language;
  if (language !== undefined) out.language = language === "auto" ? null : (language as SubmitJobBody["language"]);
  const captions = values["caption-language"];
  if (captions !== undefined) out.caption_language = captions === "spoken" ? null : (captions as SubmitJobBody["caption_language"]);
  return out;
}

function isUrl(text: string): boolean {
  return /^https?:\/\//i.test(text);
}

/** Where unfinished uploads are remembered between runs; undefined when there is no home to keep them in. */
function uploadStateFile(env: Io["env"]): string | undefined {
  const home = env.HOME || undefined;
  const dir = env.CLIPJOBS_STATE_DIR || (env.XDG_STATE_HOME ? join(env.XDG_STATE_HOME, "clipjobs") : home && join(home, ".local", "state", "clipjobs"));
  return dir === undefined ? undefined : join(dir, "uploads.json");
}

/** Uploads a local file (resuming an earlier run's upload of it) and answers its upload_id. */
async function uploadLocalFile(path: string, { client, io, values }: Context): Promise<string> {
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) throw new UsageError(`${path} is neither an http(s) URL nor a file`);
  const name = basename(path);
  const reporter = values.json ? null : uploadProgress(io, name);
  if (!values.json) io.stderr(`Uploading ${name}; if interrupted, run the same command again to resume.\n`);
  const uploaded = await uploadFile(path, {
    baseUrl: client.baseUrl,
    apiKey: io.env.CLIPJOBS_API_KEY,
    stateFile: uploadStateFile(io.env),
    onResume: (offset, total) => {
      if (!values.json) io.stderr(`Resuming the earlier upload at ${offset} of ${total} bytes.\n`);
    },
    onProgress: (sent, total) => reporter?.update({ sent, total }),
  });
  reporter?.end();
  return uploaded.uploadId;
}

async function submit(context: Context): Promise<number> {
  const { client, io, values, args } = context;
  const source = exactlyOne(args, "video URL or file");
  if (!values.type) throw new UsageError("--type is required (podcast, lecture, gaming, sports, vlog or general)");
  const wait = values.wait === true || values.download !== undefined;
  // Any text goes to the API, which answers invalid_video_type naming the allowed values.
  const videoType = values.type as SubmitJobBody["video_type"];
  // Checked before an upload, so a mistake costs no upload.
  const steering = steeringOptions(values);
  const sourceField = isUrl(source) ? { video_url: source } : { upload_id: await uploadLocalFile(source, context) };
  const submitted = await client.submitJob({
    ...sourceField,
    video_type: videoType,
    ...(values.config ? { config_name: values.config } : {}),
    ...(values["captions-url"] ? { captions_url: values["captions-url"] } : {}),
    ...steering,
    ...languageOptions(values),
  });
  if (!wait) {
    if (values.json) printJson(io, submitted);
    else io.stdout(`${submitted.job_id}  ${submitted.status}\n`);
    return 0;
  }
  if (!values.json) io.stderr(`${submitted.job_id} submitted\n`);
  // A progress line reads the job every 2 s (each read held until it ends, so the end shows at once);
  // with --json nothing is shown until the end, so each read is held for up to a minute.
  const reporter = values.json ? null : jobProgress(io);
  const job = await client.waitForJob(submitted.job_id, reporter ? { onProgress: (j) => reporter.update(j) } : {});
  reporter?.end();
  if (values.download !== undefined && job.status === "completed") {
    for (const file of await downloadClips(job, values.download)) io.stderr(`saved ${file}\n`);
  }
  if (values.json) printJson(io, job);
  else io.stdout(describeJob(job));
  return job.status === "completed" ? 0 : 1;
}

async function listJobs({ client, io, values, args }: Context): Promise<number> {
  if (args.length > 0) throw new UsageError("jobs takes no arguments");
  const limit = limitOption(values);
  const status = values.status as "all" | Job["status"] | undefined;
  const page = await client.listJobs({ ...(status ? { status } : {}), ...(limit !== undefined ? { limit } : {}) });
  if (values.json) return printJson(io, page), 0;
  if (page.jobs.length === 0) {
    io.stdout("No jobs.\n");
    return 0;
  }
  io.stdout(`${table(["job_id", "status", "created", "clips", "title"], page.jobs.map((j) => [j.job_id, j.status, j.created_at, String(j.clips_count), j.title ?? ""]))}\n`);
  if (page.next_cursor) io.stdout("(more jobs: raise --limit)\n");
  return 0;
}

async function showJob({ client, io, values, args }: Context): Promise<number> {
  const job = await client.getJob(exactlyOne(args, "job id"));
  if (values.json) printJson(io, job);
  else io.stdout(describeJob(job));
  return 0;
}

async function cancel({ client, io, values, args }: Context): Promise<number> {
  const job = await client.cancelJob(exactlyOne(args, "job id"));
  if (values.json) printJson(io, job);
  else io.stdout(`${job.job_id}  ${job.status}\n`);
  return 0;
}

function transcriptFormat(values: Values): TranscriptTextFormat | null {
  if (values.format === undefined) return values.json ? null : "txt";
  if (!(TRANSCRIPT_FORMATS as readonly string[]).includes(values.format)) throw new UsageError("--format must be txt, vtt or srt");
  return values.format as TranscriptTextFormat;
}

async function transcript({ client, io, values, args }: Context): Promise<number> {
  const jobId = exactlyOne(args, "job id");
  const format = transcriptFormat(values);
  if (format === null) return printJson(io, await client.getTranscript(jobId)), 0;
  const content = await client.getTranscriptText(jobId, format);
  if (values.json) printJson(io, { job_id: jobId, format, content });
  else io.stdout(content);
  return 0;
}

async function exportCut({ client, io, values, args }: Context): Promise<number> {
  const jobId = exactlyOne(args, "job id");
  const format = values.format;
  if (format === undefined || !(EXPORT_FORMATS as readonly string[]).includes(format)) throw new UsageError("--format must be fcpxml, edl, otio or mlt");
  const content = await client.exportJob(jobId, format as ExportFormat);
  if (values.output !== undefined) {
    await writeFile(values.output, content);
    if (values.json) printJson(io, { job_id: jobId, format, file: values.output });
    else io.stdout(`${values.output}\n`);
    return 0;
  }
  if (values.json) printJson(io, { job_id: jobId, format, content });
  else io.stdout(content);
  return 0;
}

async function download({ client, io, values, args }: Context): Promise<number> {
  if (args.length < 1 || args.length > 2) throw new UsageError("expected a job id and at most one directory");
  const [jobId, dir = "."] = args as [string, string?];
  const saved = await downloadClips(await client.getJob(jobId), dir);
  if (values.json) printJson(io, { job_id: jobId, files: saved });
  else io.stdout(saved.length > 0 ? `${saved.join("\n")}\n` : "No clips.\n");
  return 0;
}

async function usage({ client, io, values, args }: Context): Promise<number> {
  if (args.length > 0) throw new UsageError("usage takes no arguments");
  const current = await client.usage();
  if (values.json) return printJson(io, current), 0;
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
  if (values.json) return printJson(io, list), 0;
  if (list.configs.length === 0) {
    io.stdout("No saved configurations.\n");
    return 0;
  }
  const rows = list.configs.map((c) => [c.name, c.aspect_ratio, `${c.resolution}p`, `${c.min_clip_seconds}-${c.max_clip_seconds}s`, String(c.max_clips), c.reframe]);
  io.stdout(`${table(["name", "aspect", "resolution", "length", "clips", "reframe"], rows)}\n`);
  return 0;
}

const COMMANDS: Record<string, (context: Context) => Promise<number>> = {
  submit,
  jobs: listJobs,
  job: showJob,
  cancel,
  transcript,
  export: exportCut,
  clip,
  download,
  usage,
  configs,
  webhooks,
};

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
      // With --json a script reads the problem document (code, detail, field errors) from stderr; stdout stays empty.
      if (parsed.values.json) {
        io.stderr(`${JSON.stringify(error.problem ?? { code: error.code, detail: error.detail, status: error.status }, null, 2)}\n`);
        return 1;
      }
      io.stderr(`error: ${error.code}: ${error.detail}\n`);
      for (const field of error.problem?.errors ?? []) {
        if (field.message !== error.detail) io.stderr(`  ${field.path}: ${field.message}\n`);
      }
      return 1;
    }
    throw error;
  }
}
