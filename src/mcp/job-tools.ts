/** The MCP tools on jobs: submit, read, list, cancel, and a job's transcript. Each calls the service its REST route calls. */
import { z } from "zod";
import { accountState } from "../account/stub.ts";
import { JOB_STATUSES } from "../db/jobs.ts";
import { cancelOwnJob, listJobPage } from "../jobs/account-jobs.ts";
import { isJobId } from "../jobs/ids.ts";
import { readJobHeld } from "../jobs/held-read.ts";
import { readJob } from "../jobs/read-path.ts";
import { IdempotencyKey, SubmitJobFields, withOneSource } from "../jobs/submit-contract.ts";
import { submitJob } from "../jobs/submit-request.ts";
import { readOwnTranscript } from "../jobs/transcript-read.ts";
import { defineTool } from "./tool.ts";
import { toolResult } from "./tool-result.ts";
import { sentencesIn, timedText } from "./transcript-text.ts";

const JobId = z.string().min(1).max(200).describe("The job's id (job_...), as submit_job or list_jobs returned it");

/**
 * The longest get_job may hold its answer for the job's end: under the 60 s an
 * MCP client commonly gives a request before it gives up.
 */
export const GET_JOB_MAX_WAIT_SECONDS = 50;

/** The submission's one schema (jobs/submit-contract.ts), with the idempotency key as an argument, as REST has it as a header. */
const SubmitInput = withOneSource(SubmitJobFields.extend({ idempotency_key: IdempotencyKey.optional() }));

export const submitJobTool = defineTool({
  name: "submit_job",
  title: "Submit a video for clipping",
  description:
    "Start cutting a long video into short, captioned, ready-to-post clips. Give the video as video_url, or as upload_id after create_upload for a local file. " +
    "Returns at once with a job_id while the job runs (usually a few minutes; it costs credits by source length, see get_usage). " +
    `Then call get_job with the job_id and wait_seconds ${GET_JOB_MAX_WAIT_SECONDS} until its status is completed, failed or canceled. ` +
    "An account runs a limited number of jobs at once: active_job_limit means wait for (or cancel) the running one.",
  input: SubmitInput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(input, { env, auth }) {
    const { idempotency_key: key, ...body } = input;
    const { answer, replayed } = await submitJob(env, auth, body, key);
    return toolResult({
      job_id: answer.job_id,
      status: answer.status,
      created_at: answer.created_at,
      replayed,
      next: `Call get_job with job_id ${answer.job_id} and wait_seconds ${GET_JOB_MAX_WAIT_SECONDS} until it is completed, failed or canceled.`,
    });
  },
});

export const getJobTool = defineTool({
  name: "get_job",
  title: "Get a job",
  description:
    "A job's status and details. While queued or processing: progress (0-100) and step (what it is doing now). " +
    "When completed: clips, best first, each with url (MP4), thumbnail_url, start_seconds/end_seconds in the source, score, reasons, title and text (the words spoken in it), caption links, prompt_match (0-1, when the job had a prompt), what was cut out of it (removed), judged_by (model or signals), scores (a language model's hook, payoff, standalone and energy, 0-100; null on signals) and the post: title, description, hashtags. " +
    "The job's judgement {judged_by, model, fallback_reason} says what ranked the clips and why signals did, and chapters [{title, start_seconds}] are given for sources longer than ten minutes. " +
    "When failed: error.code and error.message (no credits are charged for a failed job). " +
    "A job that asked for caption_language has translation {language, status, detail} once completed: status translated means captions and clip text are in that language; otherwise they stay in the spoken language and detail says why.",
  input: z.strictObject({
    job_id: JobId,
    wait_seconds: z
      .number()
      .int()
      .min(1)
      .max(GET_JOB_MAX_WAIT_SECONDS)
      .optional()
      .describe(
        `While the job is queued or processing, hold the answer until it ends or this many seconds pass (1-${GET_JOB_MAX_WAIT_SECONDS}), as the REST read's Prefer: wait does: ` +
          "the end is seen as it happens, with one call instead of many. Without it, the job is answered as it is now.",
      ),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ job_id: jobId, wait_seconds: waitSeconds }, { env, auth, waitUntil }) {
    // The REST read gets this view with its admission; here it is asked for.
    const view = isJobId(jobId) ? await accountState(env, auth.accountId).liveJob(jobId, env.CDN_URL) : undefined;
    const scope = { env, accountId: auth.accountId, waitUntil };
    const job = waitSeconds === undefined ? await readJob(scope, jobId, view) : (await readJobHeld(scope, jobId, view, waitSeconds)).job;
    return toolResult(job);
  },
});

export const listJobsTool = defineTool({
  name: "list_jobs",
  title: "List jobs",
  description:
    "The account's jobs, newest first, each with job_id, status, title, clips_count, clip_urls and created_at. " +
    "Pass next_cursor from the answer as cursor to read older jobs.",
  input: z.strictObject({
    status: z.enum(["all", ...JOB_STATUSES]).default("all").describe("Only jobs with this status; default all"),
    limit: z.number().int().min(1).max(100).default(20).describe("Jobs per page, 1-100; default 20"),
    cursor: z.string().max(200).optional().describe("next_cursor of the previous page"),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ status, limit, cursor }, { env, auth }) {
    const page = await listJobPage(env, auth.accountId, { status: status === "all" ? null : status, limit, ...(cursor === undefined ? {} : { cursor }) });
    return toolResult(page);
  },
});

export const cancelJobTool = defineTool({
  name: "cancel_job",
  title: "Cancel a job",
  description: "Stops a queued or processing job; nothing is charged for it. A job that already finished cannot be canceled (job_not_cancelable).",
  input: z.strictObject({ job_id: JobId }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ job_id: jobId }, { env, auth }) {
    return toolResult(await cancelOwnJob(env, auth.accountId, jobId));
  },
});

export const getTranscriptTool = defineTool({
  name: "get_transcript",
  title: "Read a job's transcript",
  description:
    "What is said in a completed job's video, one sentence per line with its start and end time in the source ([m:ss.s-m:ss.s] text). " +
    "Use from_seconds/to_seconds to read only part of a long video. transcript_not_found says why a job has none (e.g. no speech, or not completed yet).",
  input: z
    .strictObject({
      job_id: JobId,
      from_seconds: z.number().min(0).optional().describe("Only sentences that end after this time (seconds into the source)"),
      to_seconds: z.number().min(0).optional().describe("Only sentences that start before this time (seconds into the source)"),
    })
    .refine((input) => input.from_seconds === undefined || input.to_seconds === undefined || input.to_seconds > input.from_seconds, {
      path: ["to_seconds"],
      message: "to_seconds must be after from_seconds.",
    }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ job_id: jobId, from_seconds: from, to_seconds: to }, { env, auth }) {
    const { job, transcript } = await readOwnTranscript(env, auth.accountId, jobId);
    const sentences = sentencesIn(transcript, { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) });
    const data = { job_id: job.id, source: transcript.source, language: transcript.language, sentences };
    const text = sentences.length > 0 ? timedText(sentences) : "(no speech in this part of the video)";
    return toolResult(data, `Transcript of ${job.id} (language: ${transcript.language ?? "unknown"}, source: ${transcript.source})\n${text}`);
  },
});
