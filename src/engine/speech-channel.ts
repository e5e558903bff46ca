/**
 * The speech routes of the engine channel (#contract, direction 2), mounted
 * inside `callbacks` so its token middleware runs first; the job comes from
 * its account's Durable Object (live-job.ts), not D1:
 *
 *   POST /:job_id/transcribe                   audio/wav chunk -> TranscribeResult (Workers AI)
 *   PUT  /:job_id/transcript                   Transcript JSON -> private transcripts/{job_id}.json
 *   PUT  /:job_id/clips/:index/captions.vtt    WebVTT          -> private staging/{job_id}/{index}.vtt
 *   PUT  /:job_id/clips/:index/captions.srt    SubRip          -> private staging/{job_id}/{index}.srt
 *
 * Everything lands in the private bucket (storage.ts): the sidecars are
 * published with their clip at completion, the transcript never is.
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import type { Job } from "../db/jobs.ts";
import { mediaType, readBodyCapped } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { validate } from "../http/validate.ts";
import {
  privateBucket,
  SRT_CONTENT_TYPE,
  stagedKey,
  transcriptKey,
  TRANSCRIPT_CONTENT_TYPE,
  VTT_CONTENT_TYPE,
  type CaptionFormat,
} from "../jobs/storage.ts";
import {
  CHUNK_START_HEADER,
  MAX_TRANSCRIPT_UPLOAD_BYTES,
  Transcript,
  TRANSCRIBE_MAX_CHUNK_BYTES,
  whisperLanguageCode,
  type CallbackAck,
  type CompleteReport,
  type TranscribeResult,
} from "#contract";
import { keepEngineAwake } from "../fleet/engine-host.ts";
import { jobOf, liveJob, noteSignOfLife, type ChannelEnv } from "./channel-job.ts";
import { liveProcessingJob } from "./live-job.ts";
import { claimAudioSeconds } from "../ai/allowance.ts";
import { jobAiRunner } from "../ai/usage.ts";
import { inspectWav } from "./wav.ts";
import { transcribeChunk, TranscriptionFailed, TranscriptionUnavailable } from "./whisper.ts";
import { looksLikeCaptions } from "./caption-shape.ts";


/** A clip's captions are a few kilobytes; this leaves room for word-level cues of a 3-minute clip. */
export const MAX_CAPTIONS_UPLOAD_BYTES = 2 * 1024 * 1024;
/** Chunk starts beyond this are not a real source (the longest source is hours, not days). */
const MAX_CHUNK_START_SECONDS = 24 * 3600;
const WAV_MEDIA_TYPES = new Set(["audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"]);
const ACK: CallbackAck = { ok: true };

const ClipIndexParam = z.object({
  job_id: z.string(),
  index: z.string().regex(/^\d{1,2}$/).transform(Number).pipe(z.number().int().min(0).max(19)),
});

/** Word and sentence times must be real spans in source time. */
const StoredTranscript = Transcript.superRefine((t, ctx) => {
  for (const list of ["words", "sentences"] as const) {
    t[list].forEach((item, i) => {
      if (item.start < 0 || item.end < item.start) {
        ctx.addIssue({ code: "custom", path: [list, i], message: "needs 0 <= start <= end" });
      }
    });
  }
});


function requireMediaType(c: Context<ChannelEnv>, allowed: readonly string[]): void {
  if (!allowed.includes(mediaType(c.req.header("Content-Type")))) {
    throw new AppError("unsupported_media_type", `Content-Type must be ${allowed.join(" or ")}.`);
  }
}

/** Stores a small object for a processing job; one that raced the job's end is removed again. */
async function storeObject(env: Env, job: Job, key: string, body: Uint8Array | string, contentType: string): Promise<void> {
  await privateBucket(env).put(key, body, {
    httpMetadata: { contentType },
    customMetadata: { job_id: job.id },
  });
  try {
    await liveProcessingJob(env, job.id, {});
  } catch (err) {
    await privateBucket(env).delete(key);
    throw err;
  }
  await keepEngineAwake(env, job.id);
}

function parseChunkStart(raw: string | undefined): number {
  const value = raw?.trim() ?? "";
  const seconds = /^\d{1,6}(\.\d{1,6})?$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(seconds) || seconds > MAX_CHUNK_START_SECONDS) {
    throw new AppError("invalid_request", `${CHUNK_START_HEADER} must be a number of seconds, e.g. 29.000.`, {
      errors: [{ path: CHUNK_START_HEADER, message: "expected a non-negative decimal number" }],
    });
  }
  return seconds;
}

function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new AppError("invalid_request", `${what} must be UTF-8 text.`);
  }
}

function checkCaptions(format: CaptionFormat, text: string): void {
  if (!looksLikeCaptions(format, text)) {
    throw new AppError("invalid_request", format === "vtt" ? "The body is not a WebVTT file." : "The body is not a SubRip file.");
  }
}

async function putCaptions(c: Context<ChannelEnv>, format: CaptionFormat, index: number): Promise<Response> {
  const job = jobOf(c);
  requireMediaType(c, [format === "vtt" ? "text/vtt" : "application/x-subrip"]);
  const text = decodeUtf8(await readBodyCapped(c.req.raw, MAX_CAPTIONS_UPLOAD_BYTES), "Captions");
  checkCaptions(format, text);
  await storeObject(c.env, job, stagedKey(job.id, index, format), text, format === "vtt" ? VTT_CONTENT_TYPE : SRT_CONTENT_TYPE);
  return c.json(ACK);
}

/** Keys the speech parts of a completion report promise; the complete route checks they were uploaded. */
export function speechUploadKeys(jobId: string, report: Pick<CompleteReport, "clips" | "transcript">): string[] {
  const sidecars = report.clips
    .filter((clip) => clip.sidecars)
    .flatMap((clip) => [stagedKey(jobId, clip.index, "vtt"), stagedKey(jobId, clip.index, "srt")]);
  return report.transcript ? [transcriptKey(jobId), ...sidecars] : sidecars;
}

/**
 * One speech-to-text chunk for `job` (a job's transcribe route, and an edit's:
 * edit-channel.ts), counted against the job's audio allowance.
 */
export async function transcribeWav(env: Env, job: Job, request: Request, signOfLife: () => Promise<void>): Promise<TranscribeResult> {
  if (!WAV_MEDIA_TYPES.has(mediaType(request.headers.get("Content-Type") ?? undefined))) {
    throw new AppError("unsupported_media_type", `Content-Type must be ${[...WAV_MEDIA_TYPES].join(" or ")}.`);
  }
  const chunkStart = parseChunkStart(request.headers.get(CHUNK_START_HEADER) ?? undefined);
  const audio = await readBodyCapped(request, TRANSCRIBE_MAX_CHUNK_BYTES);
  const wav = inspectWav(audio);
  if ("problem" in wav) throw new AppError("invalid_request", wav.problem);
  await signOfLife();
  // The job's own audio only, up to its allowance (src/ai/allowance.ts); 403 ai_scope_exceeded beyond it.
  const claim = await claimAudioSeconds(env, job, wav.durationSeconds);
  try {
    // The job's `language` hint; jobs stored before it have none.
    const hint = job.config.language ?? null;
    return await transcribeChunk(jobAiRunner(env, job.id), audio, chunkStart, wav.durationSeconds, undefined, hint ? whisperLanguageCode(hint) : null);
  } catch (err) {
    await claim.giveBack();
    if (err instanceof TranscriptionUnavailable) {
      throw new AppError("transcription_unavailable", `${err.message} Use the other transcript sources.`);
    }
    if (err instanceof TranscriptionFailed) {
      console.warn(`[${job.id}] ${err.message}`);
      throw new AppError("transcription_failed", `${err.message}. Go on without this chunk.`);
    }
    throw err;
  }
}

export const speechChannel = new Hono<ChannelEnv>()
  // Per route, not `use("/:job_id/*")`: mounted at "/", that would run for every later route of the parent too.
  .post("/:job_id/transcribe", liveJob, async (c) => {
    const job = jobOf(c);
    return c.json(await transcribeWav(c.env, job, c.req.raw, () => noteSignOfLife(c.env, job)));
  })
  .put("/:job_id/transcript", liveJob, async (c) => {
    const job = jobOf(c);
    requireMediaType(c, ["application/json"]);
    const text = decodeUtf8(await readBodyCapped(c.req.raw, MAX_TRANSCRIPT_UPLOAD_BYTES), "The transcript");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AppError("invalid_request", "The transcript is not valid JSON.");
    }
    const parsed = StoredTranscript.safeParse(json);
    if (!parsed.success) {
      throw new AppError("invalid_request", "The transcript does not match the contract's Transcript.", {
        errors: parsed.error.issues.slice(0, 20).map((issue) => ({ path: issue.path.join(".") || "(body)", message: issue.message })),
      });
    }
    await storeObject(c.env, job, transcriptKey(job.id), JSON.stringify(parsed.data), TRANSCRIPT_CONTENT_TYPE);
    return c.json(ACK);
  })
  .put("/:job_id/clips/:index/captions.vtt", liveJob, validate("param", ClipIndexParam), (c) => putCaptions(c, "vtt", c.req.valid("param").index))
  .put("/:job_id/clips/:index/captions.srt", liveJob, validate("param", ClipIndexParam), (c) => putCaptions(c, "srt", c.req.valid("param").index));
