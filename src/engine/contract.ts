/**
 * The Worker <-> clip engine contract. This is the one module that both the
 * Worker (src/) and the engine (container/) import, so a change here is a
 * change on both sides of the channel at once. Schema and type share a name.
 *
 * Direction 1, Worker -> engine (engine HTTP server, port ENGINE_PORT):
 *   GET  /health                        -> EngineHealth
 *   POST /jobs           StartJob        -> 202 StartJobAccepted (idempotent per job_id)
 *   POST /jobs/:id/cancel                -> 202 | 404
 * Both POSTs carry an ENGINE_SIGNATURE_HEADER made with ENGINE_SECRET (see
 * signEngineRequest); the engine answers 401 to anything else and starts
 * nothing. What the engine may reach (private hosts) and where it calls back
 * come from its own environment, never from a request.
 *
 * Direction 2, engine -> Worker (under the engine's CALLBACK_BASE, Bearer job token):
 *   POST {callback_base}/internal/v1/jobs/:id/progress  ProgressReport -> CallbackAck
 *   POST {callback_base}/internal/v1/jobs/:id/probe     ProbeReport    -> ProbeAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/clips/:index            (video/mp4 body)  -> CallbackAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/clips/:index/thumbnail  (image/jpeg body) -> CallbackAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/transcript  Transcript (JSON)   -> CallbackAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/clips/:index/captions.vtt (text/vtt) -> CallbackAck
 *   PUT  {callback_base}/internal/v1/jobs/:id/clips/:index/captions.srt (application/x-subrip) -> CallbackAck
 *   POST {callback_base}/internal/v1/jobs/:id/transcribe  (audio/wav) -> TranscribeResult | 503 | 502
 *   POST {callback_base}/internal/v1/jobs/:id/complete  CompleteReport -> CallbackAck
 *   POST {callback_base}/internal/v1/jobs/:id/fail      FailReport     -> CallbackAck
 *   POST {callback_base}/internal/v1/jobs/:id/interrupted InterruptedReport -> CallbackAck
 *        (the engine is shutting down, e.g. a redeploy: the Worker puts the job back in the queue)
 *
 * Callback answers: 200 with the ack body while the job is live; 401 for a bad,
 * expired or foreign token; 409 (problem+json, code job_not_active) once the
 * job is no longer processing (canceled, failed by the watchdog, finished):
 * the engine must stop work, clean up and send nothing more for that job.
 */
import { z } from "zod";

export const ENGINE_PORT = 8788;

/** Path prefix of the Worker's internal routes that the engine calls. */
export const CALLBACK_PREFIX = "/internal/v1/jobs";

export const VIDEO_TYPES = ["podcast", "lecture", "gaming", "sports", "vlog", "general"] as const;
export const VideoType = z.enum(VIDEO_TYPES);
export type VideoType = z.infer<typeof VideoType>;

export const ASPECT_RATIOS = ["9:16", "1:1", "4:5", "16:9", "original"] as const;
export const AspectRatio = z.enum(ASPECT_RATIOS);
export type AspectRatio = z.infer<typeof AspectRatio>;

export const RESOLUTIONS = [720, 1080] as const;
export const REFRAME_MODES = ["center", "auto", "faces"] as const;
/** Faces (issue 17): `single` frames one person (or a group that fits), `split` stacks the two main faces. */
export const LAYOUTS = ["single", "split"] as const;
/** What a clip's crop actually followed (ClipReport.reframe). */
export const REFRAME_USED = ["faces", "activity", "center"] as const;

/** Caption delivery: burned into the picture, WebVTT/SRT sidecar files, both or none. */
export const CAPTION_MODES = ["off", "burned", "sidecar", "both"] as const;
export const CaptionMode = z.enum(CAPTION_MODES);
export type CaptionMode = z.infer<typeof CaptionMode>;

/** Burned caption presets: bold (outlined, word highlighted as said), clean (white with shadow), boxed. */
export const CAPTION_STYLES = ["bold", "clean", "boxed"] as const;
export const CaptionStyle = z.enum(CAPTION_STYLES);
export type CaptionStyle = z.infer<typeof CaptionStyle>;

export const CAPTION_POSITIONS = ["bottom", "center"] as const;
export const CaptionPosition = z.enum(CAPTION_POSITIONS);
export type CaptionPosition = z.infer<typeof CaptionPosition>;

/**
 * A clip configuration (SPEC section 3). The API's saved configurations and
 * the job sent to the engine use this same schema, so the dashboard, the API
 * and the engine validate identically.
 */
export const ClipConfig = z
  .object({
    aspect_ratio: AspectRatio.default("9:16"),
    resolution: z.union([z.literal(720), z.literal(1080)]).default(1080),
    min_clip_seconds: z.number().int().min(5).max(120).default(15),
    max_clip_seconds: z.number().int().min(10).max(180).default(60),
    max_clips: z.number().int().min(1).max(20).default(5),
    reframe: z.enum(REFRAME_MODES).default("center"),
    layout: z.enum(LAYOUTS).default("single"),
    captions: CaptionMode.default("both"),
    caption_style: CaptionStyle.default("bold"),
    caption_position: CaptionPosition.default("bottom"),
  })
  .strict()
  .refine((c) => c.max_clip_seconds >= c.min_clip_seconds, {
    message: "max_clip_seconds must be at least min_clip_seconds",
    path: ["max_clip_seconds"],
  });
export type ClipConfig = z.infer<typeof ClipConfig>;

export const DEFAULT_CLIP_CONFIG: ClipConfig = ClipConfig.parse({});

/** Job failure codes (SPEC section 6), carried in `error.code` of a failed job. */
export const FAILURE_CODES = [
  "source_unreachable",
  "source_not_video",
  "source_too_large",
  "source_too_long",
  "unsupported_platform",
  "insufficient_credits",
  "no_clips_found",
  "processing_timeout",
  "queue_timeout",
  "internal_error",
  "captions_invalid",
] as const;
export const FailureCode = z.enum(FAILURE_CODES);
export type FailureCode = z.infer<typeof FailureCode>;

/**
 * Limits the Worker hands to the engine with every job (SPEC section 7).
 * Whether private hosts are allowed is not among them: that is the engine's
 * own setting (ALLOW_PRIVATE_SOURCES in its environment).
 */
export const EngineLimits = z.object({
  max_source_bytes: z.number().int().positive(),
  max_source_seconds: z.number().positive(),
  download_timeout_seconds: z.number().positive(),
});
export type EngineLimits = z.infer<typeof EngineLimits>;

/** Unknown members (an old Worker's callback_base, allow_private_hosts) are dropped by parsing. */
export const StartJob = z.object({
  job_id: z.string().regex(/^job_[A-Za-z0-9]{16,40}$/),
  /** Bearer token for every callback of this job. */
  token: z.string().min(20),
  video_url: z.string().url(),
  /** "upload": the source is a direct upload, read from GET {callback_base}/internal/v1/jobs/:id/source with the token; video_url is upload://<id>/<file name>. Absent: "url". */
  source: z.enum(["url", "upload"]).optional(),
  video_type: VideoType,
  config: ClipConfig,
  limits: EngineLimits,
  /** SRT or WebVTT file named at submission; fetched under the same rules as video_url. */
  captions_url: z.string().url().nullish(),
});
export type StartJob = z.infer<typeof StartJob>;

export const StartJobAccepted = z.object({
  job_id: z.string(),
  /** true when this call started the job, false when it was already running. */
  started: z.boolean(),
});
export type StartJobAccepted = z.infer<typeof StartJobAccepted>;

export const EngineHealth = z.object({
  ok: z.literal(true),
  backend: z.enum(["native", "wasm"]),
  active_jobs: z.number().int().nonnegative(),
});
export type EngineHealth = z.infer<typeof EngineHealth>;

export const ProgressReport = z.object({
  /** 0-99 while processing; the Worker never lets progress decrease. */
  progress: z.number().int().min(0).max(99),
  step: z.string().min(1).max(120),
});
export type ProgressReport = z.infer<typeof ProgressReport>;

export const ProbeReport = z.object({
  duration_seconds: z.number().positive(),
  title: z.string().max(300),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  format: z.string().max(100),
  size_bytes: z.number().int().nonnegative(),
});
export type ProbeReport = z.infer<typeof ProbeReport>;

/** `proceed: false` means the Worker refused (e.g. credits) and has failed the job. */
export const ProbeAck = z.object({
  proceed: z.boolean(),
  credits_reserved: z.number().int().nonnegative(),
  error: z.object({ code: FailureCode, message: z.string() }).optional(),
});
export type ProbeAck = z.infer<typeof ProbeAck>;

export const CallbackAck = z.object({ ok: z.literal(true) });
export type CallbackAck = z.infer<typeof CallbackAck>;

/** One spoken word; times in seconds of source time. */
export const TranscriptWord = z.object({
  text: z.string(),
  start: z.number(),
  end: z.number(),
  speaker: z.string().optional(),
});
export type TranscriptWord = z.infer<typeof TranscriptWord>;

export const TranscriptSentence = z.object({
  text: z.string(),
  start: z.number(),
  end: z.number(),
  speaker: z.string().optional(),
});
export type TranscriptSentence = z.infer<typeof TranscriptSentence>;

/** Where a job's transcript came from (best first: workers_ai, subtitle_track, platform_subtitles, captions_url). */
export const TRANSCRIPT_SOURCES = ["workers_ai", "subtitle_track", "platform_subtitles", "captions_url"] as const;
export const TranscriptSource = z.enum(TRANSCRIPT_SOURCES);
export type TranscriptSource = z.infer<typeof TranscriptSource>;

/** Body of PUT {callback_base}/internal/v1/jobs/:id/transcript (<= MAX_TRANSCRIPT_UPLOAD_BYTES). */
export const Transcript = z.object({
  source: TranscriptSource,
  language: z.string().nullable(),
  words: z.array(TranscriptWord),
  sentences: z.array(TranscriptSentence),
});
export type Transcript = z.infer<typeof Transcript>;

export const TranscriptSummary = z.object({
  source: TranscriptSource,
  language: z.string().nullable(),
  word_count: z.number().int().nonnegative(),
});
export type TranscriptSummary = z.infer<typeof TranscriptSummary>;

/**
 * Answer of POST {callback_base}/internal/v1/jobs/:id/transcribe (audio/wav body,
 * header Chunk-Start-Seconds). Word times are already offset by the chunk start.
 * 503 transcription_unavailable: no AI binding (local dev), try other sources;
 * 502 transcription_failed: the Worker retried and gave up, go on without.
 */
export const TranscribeResult = z.object({
  language: z.string().nullable(),
  words: z.array(TranscriptWord),
});
export type TranscribeResult = z.infer<typeof TranscribeResult>;

/** Whisper's input window: longest audio chunk the engine sends per /transcribe call. */
export const TRANSCRIBE_MAX_CHUNK_SECONDS = 30;
/** Overlap between consecutive chunks so no word is cut at a seam. */
export const TRANSCRIBE_CHUNK_OVERLAP_SECONDS = 1;
/** Largest /transcribe body (30 s of mono 16 kHz s16le is 960,044 bytes). */
export const TRANSCRIBE_MAX_CHUNK_BYTES = 1_200_000;
/** Header carrying the chunk's start in source seconds. */
export const CHUNK_START_HEADER = "Chunk-Start-Seconds";
/** Largest transcript JSON the Worker accepts on the channel. */
export const MAX_TRANSCRIPT_UPLOAD_BYTES = 8 * 1024 * 1024;

export const ClipReport = z.object({
  /** 0-based rank: 0 is the best clip. Matches the uploaded clip index. */
  index: z.number().int().min(0).max(19),
  start_seconds: z.number().nonnegative(),
  end_seconds: z.number().positive(),
  score: z.number().min(0).max(1),
  reasons: z.array(z.string().min(1).max(60)).min(1).max(8),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  // Faces (issue 17): what the crop followed and how many faces were seen (0 when none were looked for).
  reframe: z.enum(REFRAME_USED).default("center"),
  faces_count: z.number().int().nonnegative().default(0),
  /** The words spoken inside the clip; null without a transcript. */
  text: z.string().max(10000).nullable(),
  /** A short line chosen from the clip's own words; null without a transcript. */
  title: z.string().max(120).nullable(),
  captions_burned: z.boolean(),
  /** true when captions.vtt and captions.srt were uploaded for this clip. */
  sidecars: z.boolean(),
});
export type ClipReport = z.infer<typeof ClipReport>;

export const CompleteReport = z.object({
  title: z.string().max(300),
  source_duration_seconds: z.number().positive(),
  clips: z.array(ClipReport).min(1).max(20),
  transcript: TranscriptSummary.nullable(),
  /** Why there is no transcript (null when there is one). */
  transcript_unavailable_reason: z.string().max(300).nullable(),
});
export type CompleteReport = z.infer<typeof CompleteReport>;

export const FailReport = z.object({
  code: FailureCode,
  message: z.string().min(1).max(500),
});
export type FailReport = z.infer<typeof FailReport>;

/** The engine stops before finishing a job that is not its fault (SIGTERM on redeploy or scale-in). */
export const InterruptedReport = z.object({
  reason: z.enum(["shutdown"]),
});
export type InterruptedReport = z.infer<typeof InterruptedReport>;

/** Largest clip or thumbnail upload the Worker accepts on the channel. */
export const MAX_CLIP_UPLOAD_BYTES = 512 * 1024 * 1024;

export function callbackUrl(base: string, jobId: string, suffix: string): string {
  return `${base.replace(/\/+$/, "")}${CALLBACK_PREFIX}/${jobId}/${suffix}`;
}

// ---------------------------------------------------------------------------
// Signed requests, Worker -> engine. Both sides hold ENGINE_SECRET (the Worker
// as a secret, the engine in its environment); a request is accepted only
// with a fresh signature over its method, path and body.

export const ENGINE_SIGNATURE_HEADER = "Engine-Signature";
/** A signature older or newer than this is refused (clock skew plus transit). */
export const ENGINE_SIGNATURE_TOLERANCE_SECONDS = 300;
/** ENGINE_SECRET must have at least this many bytes, on both sides. */
export const MIN_ENGINE_SECRET_BYTES = 32;

const utf8 = new TextEncoder();

/** Why a secret is unusable, or null when it is fine. */
export function engineSecretProblem(secret: string | undefined): string | null {
  if (!secret) return "ENGINE_SECRET is not set";
  if (utf8.encode(secret).length < MIN_ENGINE_SECRET_BYTES) {
    return `ENGINE_SECRET must be at least ${MIN_ENGINE_SECRET_BYTES} bytes (e.g. openssl rand -base64 32)`;
  }
  return null;
}

function toBase64Url(bytes: ArrayBuffer): string {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return null;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
    const bytes = new Uint8Array(new ArrayBuffer(binary.length));
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

async function signatureKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", utf8.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

function signedText(timestamp: number, method: string, path: string, body: string): string {
  return `${timestamp}.${method.toUpperCase()}.${path}.${body}`;
}

/** The ENGINE_SIGNATURE_HEADER value for a request: `t=<unix seconds>,v1=<base64url HMAC-SHA256>`. */
export async function signEngineRequest(
  secret: string,
  request: { method: string; path: string; body: string },
  nowMs: number = Date.now(),
): Promise<string> {
  const timestamp = Math.floor(nowMs / 1000);
  const mac = await crypto.subtle.sign("HMAC", await signatureKey(secret), utf8.encode(signedText(timestamp, request.method, request.path, request.body)));
  return `t=${timestamp},v1=${toBase64Url(mac)}`;
}

/** True only for a fresh signature of exactly this method, path and body (compared in constant time by WebCrypto). */
export async function verifyEngineRequest(
  secret: string,
  header: string | null | undefined,
  request: { method: string; path: string; body: string },
  nowMs: number = Date.now(),
): Promise<boolean> {
  const match = /^t=(\d{1,12}),v1=([A-Za-z0-9_-]{1,200})$/.exec(header ?? "");
  if (!match) return false;
  const timestamp = Number(match[1]);
  if (Math.abs(nowMs / 1000 - timestamp) > ENGINE_SIGNATURE_TOLERANCE_SECONDS) return false;
  const mac = fromBase64Url(match[2] ?? "");
  if (!mac) return false;
  return crypto.subtle.verify("HMAC", await signatureKey(secret), mac, utf8.encode(signedText(timestamp, request.method, request.path, request.body)));
}
