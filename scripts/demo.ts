/**
 * `npm run demo`: the main job end to end on the local stack, as a client
 * would run it. Starts the Worker (wrangler dev) and the engine, creates an
 * account and API key through the operator API, makes a sample video (or
 * takes the one named on the command line), serves it on loopback, submits
 * it through the public API, follows the job with a progress bar and prints
 * the clips. Each stage that fails says which one it was.
 *
 * Run through scripts/demo.mjs, which installs dependencies and checks for
 * a native ffmpeg first.
 *
 * Environment (for tests; the defaults suit a person at a terminal):
 *   DEMO_DIR    state, logs, sample and downloaded clips (default .tmp/demo)
 *   DEMO_PORTS  "auto": any free ports instead of preferring 8787/8788
 */
import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { AdminClient } from "./lib/admin-client.ts";
import { ApiClient, ApiError, type JobView, type SubmitJobResponse } from "./local-stack/api-client.ts";
import { portInUse } from "./local-stack/ports.ts";
import { startSourceServer, type SourceServer } from "./local-stack/source-server.ts";
import { startLocalStack, type LocalStack } from "./local-stack/stack.ts";
import { workersAiAccess } from "./local-stack/workers-ai.ts";
import { CONFIG_PRESETS, parseDemoArgs, UsageError, WASM_CONFIG, type DemoArgs } from "./demo/args.ts";
import { checkDownloads } from "./demo/downloads.ts";
import { ProgressDisplay } from "./demo/progress.ts";
import { demoSample } from "./demo/sample.ts";
import { uploadLocalFile } from "./demo/upload.ts";
import { clipTable } from "./demo/table.ts";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const demoDir = resolve(process.env.DEMO_DIR || join(root, ".tmp", "demo"));
/** Long enough for a long source on the WebAssembly backend; Ctrl-C ends it sooner. */
const JOB_DEADLINE_MS = 3 * 60 * 60_000;
const POLL_INTERVAL_MS = 1500;

/** A failure that names the stage it happened in. */
class StageFailure extends Error {
  constructor(
    readonly stage: string,
    message: string,
  ) {
    super(message);
  }
}

async function stage<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StageFailure) throw error;
    throw new StageFailure(name, error instanceof Error ? error.message : String(error));
  }
}

const resources: { stack?: LocalStack; sources?: SourceServer } = {};

async function shutdown(): Promise<void> {
  const { stack, sources } = resources;
  resources.stack = undefined;
  resources.sources = undefined;
  await Promise.all([stack?.stop(), sources?.close()]);
}

/** Prefers the usual local ports, so the printed URLs match `npm run dev`'s; any free ones otherwise. */
async function preferredPort(port: number): Promise<number | undefined> {
  if (process.env.DEMO_PORTS === "auto") return undefined;
  return (await portInUse(port)) ? undefined : port;
}

/** What POST /api/v1/jobs gets for the source: a URL, or a direct upload. */
type SourceField = { video_url: string } | { upload_id: string };

function isLocalFile(source: string | undefined): source is string {
  return source !== undefined && !/^https?:\/\//i.test(source);
}

/** A local file is uploaded through the API (tus); the sample and URLs go by URL. */
async function prepareSource(args: DemoArgs, workerUrl: string, apiKey: string, nativeFfmpeg: boolean): Promise<{ field: SourceField; label: string }> {
  if (isLocalFile(args.source)) {
    const path = resolve(args.source);
    let shown = -1;
    const uploadId = await uploadLocalFile(workerUrl, apiKey, path, (sent, total) => {
      const percent = Math.floor((sent * 100) / Math.max(1, total));
      if (percent === shown) return;
      shown = percent;
      process.stdout.write(`\r  Uploading ${basename(path)}: ${percent}% of ${(total / 1024 / 1024).toFixed(1)} MiB`);
    });
    process.stdout.write(`\n  Uploaded as ${uploadId} (POST/PATCH /api/v1/uploads)\n`);
    return { field: { upload_id: uploadId }, label: path };
  }
  resources.sources = await startSourceServer();
  const served = await resolveSource(args, resources.sources, nativeFfmpeg);
  return { field: { video_url: served.url }, label: served.label };
}

async function resolveSource(args: DemoArgs, sources: SourceServer, nativeFfmpeg: boolean): Promise<{ url: string; label: string }> {
  if (args.source === undefined) {
    const started = Date.now();
    const sample = await demoSample(demoDir, nativeFfmpeg);
    const made = Date.now() - started > 1000 ? ` (made in ${((Date.now() - started) / 1000).toFixed(0)} s)` : " (cached)";
    const { facts } = sample;
    const sound =
      sample.spokenSentences !== null
        ? `${sample.spokenSentences} spoken sentences (espeak-ng) with the script as a subtitle track`
        : `${facts.phrases.length} speech phrases, ${facts.bursts.length} loud moments (${sample.note})`;
    console.log(
      `  Sample: ${sample.path}${made}\n` +
        `          ${facts.durationSeconds.toFixed(0)} s, ${facts.width}x${facts.height}, ${sound}, ${facts.sceneChanges.length} scene changes`,
    );
    return { url: sources.addFile("clipjobs-demo-sample.mp4", sample.path), label: "the generated sample" };
  }
  if (/^https?:\/\//i.test(args.source)) return { url: args.source, label: args.source };
  // Checked to exist before the stack started.
  const path = resolve(args.source);
  return { url: sources.addFile(basename(path), path), label: path };
}

async function followJob(client: ApiClient, jobId: string): Promise<JobView> {
  const display = new ProgressDisplay();
  try {
    return await client.waitForJob(jobId, { timeoutMs: JOB_DEADLINE_MS, intervalMs: POLL_INTERVAL_MS, onUpdate: (job) => display.update(job) });
  } finally {
    display.finish();
  }
}

async function main(): Promise<void> {
  const args = parseDemoArgs(process.argv.slice(2));
  const nativeFfmpeg = process.env.ENGINE_FFMPEG_BACKEND !== "wasm";
  // A missing file is known before anything starts.
  if (args.source !== undefined && !/^https?:\/\//i.test(args.source)) {
    await stage("source", async () => {
      const path = resolve(args.source ?? "");
      if (!existsSync(path) || !statSync(path).isFile()) throw new Error(`no such file: ${path}`);
    });
  }

  console.log("1/6 Starting the local stack (wrangler dev + clip engine)...");
  const ai = workersAiAccess(process.env);
  console.log(`  ${ai.notice}`);
  const stack = await stage("stack start", async () => {
    resources.stack = await startLocalStack({
      root,
      dir: join(demoDir, "stack"),
      vars: ai.vars,
      workerPort: await preferredPort(8787),
      enginePort: await preferredPort(8788),
    });
    return resources.stack;
  });
  console.log(`  Worker ${stack.workerUrl}  engine ${stack.engineUrl} (${stack.engineBackend} ffmpeg)  logs ${stack.logsDir}`);
  // The WebAssembly ffmpeg is about ten times slower: ask for fewer, smaller clips unless told otherwise.
  const configName = args.configName ?? (stack.engineBackend === "wasm" ? WASM_CONFIG : undefined);
  if (configName !== args.configName) console.log(`  WebAssembly ffmpeg: using the "${configName}" configuration (720p, at most 3 clips of up to 20 s).`);

  console.log("2/6 Creating a local account and API key...");
  // A local, throwaway account: its key is printed so the API can be tried by hand afterwards.
  const { client, apiKey } = await stage("account", async () => {
    const admin = new AdminClient(stack.workerUrl, stack.adminToken);
    const email = `demo-${Date.now()}-${randomBytes(3).toString("hex")}@example.test`;
    const account = await admin.createAccount(email, "pro");
    console.log(`  ${email} (plan pro)  API key ${account.api_key}`);
    const api = new ApiClient(stack.workerUrl, account.api_key);
    if (configName !== undefined) {
      const saved = await api.request("PUT", `/api/v1/configs/${configName}`, { body: CONFIG_PRESETS[configName] });
      if (saved.status >= 300) throw new ApiError(`PUT /api/v1/configs/${configName}`, saved.status, saved.body);
      console.log(`  Saved configuration "${configName}": ${JSON.stringify(CONFIG_PRESETS[configName])}`);
    }
    return { client: api, apiKey: account.api_key };
  });
  const usageBefore = await stage("account", () => client.usage());

  console.log(
    args.source === undefined ? "3/6 Making the sample video..." : isLocalFile(args.source) ? "3/6 Uploading the file..." : "3/6 Preparing the source...",
  );
  const source = await stage(args.source === undefined ? "sample" : isLocalFile(args.source) ? "upload" : "source", () =>
    prepareSource(args, stack.workerUrl, apiKey, nativeFfmpeg),
  );

  console.log(`4/6 Submitting ${source.label} (video_type ${args.videoType}) to POST /api/v1/jobs...`);
  const submitted = await stage("submit", () =>
    client.expect<SubmitJobResponse>(201, "POST", "/api/v1/jobs", {
      body: { ...source.field, video_type: args.videoType, ...(configName ? { config_name: configName } : {}) },
    }),
  );
  console.log(`  ${submitted.job_id}: ${submitted.message ?? submitted.status}`);

  console.log("5/6 Processing...");
  const job = await stage("processing", () => followJob(client, submitted.job_id));
  if (job.status !== "completed") {
    const reason = job.error ? `${job.error.code}: ${job.error.message}` : `the job ended ${job.status}`;
    throw new StageFailure("processing", `job ${job.job_id} ${job.status} (${reason})`);
  }

  console.log("6/6 Checking the downloads...");
  const clips = job.clips ?? [];
  const checked = await stage("download check", () => checkDownloads(clips, join(demoDir, "clips", job.job_id)));
  const usage = await stage("download check", () => client.usage());

  const count = job.clips_count ?? clips.length;
  console.log(`\n"${job.title ?? "untitled"}": ${count} clip${count === 1 ? "" : "s"} from ${(job.source_duration_seconds ?? 0).toFixed(1)} s of video\n`);
  console.log(clipTable(clips));
  console.log(`\n${checked}`);
  console.log(
    `Credits used: ${job.credits_charged ?? "?"} (usage ${usageBefore.credits_remaining} -> ${usage.credits_remaining} of ${usage.credits_total}, plan ${usage.plan})`,
  );
  console.log(`The job as the API shows it:\n  curl -s -H "Authorization: Bearer ${apiKey}" ${stack.workerUrl}/api/v1/jobs/${job.job_id}`);
  if (args.keep) {
    console.log("\nThe local stack keeps running (--keep): the URLs above stay live until Ctrl-C.");
    await new Promise<never>(() => {});
  }
  console.log("\nThe local stack stops now (its URLs with it); add --keep to leave it running.");
}

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\nInterrupted: stopping the local stack...`);
    void shutdown().finally(() => process.exit(130));
  });
}

main()
  .then(async () => {
    await shutdown();
    process.exit(0);
  })
  .catch(async (error: unknown) => {
    if (interrupted) return;
    await shutdown();
    if (error instanceof UsageError) {
      console.error(error.message);
      process.exit(2);
    }
    const stageName = error instanceof StageFailure ? error.stage : "demo";
    const message = error instanceof Error ? error.message : String(error);
    console.error(`\nDemo failed at stage "${stageName}": ${message}`);
    console.error(`Logs: ${join(demoDir, "stack", "logs")}`);
    process.exit(1);
  });
