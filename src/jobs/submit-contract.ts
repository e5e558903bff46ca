/**
 * The one description of a job submission. POST /api/v1/jobs validates its
 * body with it (and the OpenAPI document publishes it), the MCP tool
 * submit_job takes it as its input schema, and the dashboard's form is read
 * into it: the same input is accepted or refused the same way, with the same
 * problem `code`, wherever it comes from. All three then call submitJob
 * (submit-request.ts), which runs the checks a schema cannot make
 * (video_url and captions_url rules, video_type, the configuration, the
 * upload) with their own codes.
 *
 * Shape only where a field has a code of its own: video_url, captions_url
 * (invalid_video_url, invalid_captions_url) and video_type
 * (invalid_video_type) are strings here, so an over-long URL or an unknown
 * type gets that code on every surface. The values that succeed are still
 * published (`enum`, `format`) for clients and models to read. Unknown
 * members are refused everywhere.
 */
import { z } from "@hono/zod-openapi";
import { CaptionLanguage, Prompt, RemoveSilence, SpeechLanguage, VIDEO_TYPES } from "#contract";
import { VIDEO_TYPE_DESCRIPTIONS } from "./video-types.ts";

/** Longest Idempotency-Key (header, MCP argument, dashboard form field). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const videoTypeHelp = VIDEO_TYPES.map((type) => `${type}: ${VIDEO_TYPE_DESCRIPTIONS[type]}`).join(" ");

/** The submission's members; SubmitJobBody adds the rule between them. */
export const SubmitJobFields = z.object({
  video_url: z
    .string()
    .optional()
    .meta({ format: "uri" })
    .describe(
      "http(s) URL of the video: a direct video file or a page of a supported video platform (at most 2048 characters, no credentials, no private address). Exactly one of video_url and upload_id.",
    ),
  upload_id: z
    .string()
    .optional()
    .describe(
      "A complete upload (POST /api/v1/uploads, or the MCP tool create_upload) not used by another job; the title defaults to its file name. Exactly one of video_url and upload_id.",
    ),
  video_type: z
    .string()
    .meta({ enum: [...VIDEO_TYPES] })
    .describe(`What kind of video it is; it decides how moments are found (GET /api/v1/video-types). ${videoTypeHelp}`),
  config_name: z
    .string()
    .min(1)
    .max(64)
    .nullish()
    .describe("A saved configuration (clip length, count, aspect ratio, captions, brand); omitted or null: the defaults (up to 5 vertical 9:16 clips of 15-60 s with captions)."),
  captions_url: z
    .string()
    .nullish()
    .meta({ format: "uri" })
    .describe("An SRT or WebVTT file of the video's speech (same URL rules as video_url); used as the transcript when no better source exists."),
  prompt: Prompt.nullish().describe(
    'Clip only the moments about this topic, in the user\'s words (e.g. "the parts about pricing"), in any language the speech may be in; ranked by the match with the video type\'s signals. Omitted: the configuration\'s prompt; null: none. Needs a transcript (else the job fails prompt_needs_transcript).',
  ),
  time_range: z
    .object({
      start_seconds: z.number().describe("Start, in seconds from the beginning of the video"),
      end_seconds: z.number().describe("End, in seconds from the beginning of the video"),
    })
    .strict()
    .nullish()
    .describe(
      "Analyse and clip only this part of the video (e.g. minutes 10 to 40: {start_seconds: 600, end_seconds: 2400}); credits are charged on its length inside the video. 0 <= start_seconds < end_seconds, at least min_clip_seconds long (else invalid_time_range); a range starting after the video ends fails the job time_range_outside_source, uncharged.",
    ),
  remove_silence: RemoveSilence.optional().describe(
    "Shorten pauses inside each clip: off, pauses (over 0.8 s become 0.4 s), tight (over 0.35 s become 0.15 s). Omitted: the configuration's.",
  ),
  remove_fillers: z.boolean().optional().describe("true cuts filler words (um, uh, erm, ...) out of each clip, from the transcript's word times. Omitted: the configuration's."),
  language: SpeechLanguage.nullish().describe(
    "The spoken language (ISO 639-1, e.g. en, de, ja), a hint passed to speech-to-text; overrides the configuration's. Omitted: the configuration's; null: detected.",
  ),
  caption_language: CaptionLanguage.nullish().describe(
    "Translate captions, sidecars and clip text into this language (ISO 639-1); cuts still follow the spoken sentences. Overrides the configuration's; null: the spoken language.",
  ),
})
  // A member it does not know is refused (invalid_request), as in a saved configuration: a per-job
  // max_clips, say, would otherwise be dropped without a word.
  .strict();

/** Exactly one source, checked also when other members are wrong, so every problem is listed at once. */
export function withOneSource<S extends z.ZodType<{ video_url?: string | undefined; upload_id?: string | undefined }>>(schema: S) {
  return schema.refine((body) => (body.video_url === undefined) !== (body.upload_id === undefined), {
    path: ["video_url"],
    message: "Send exactly one of video_url and upload_id.",
    when: (payload) => typeof payload.value === "object" && payload.value !== null,
  });
}

/** A submission: the REST body, the MCP tool's arguments (with idempotency_key) and the dashboard form read into one. */
export const SubmitJobBody = withOneSource(SubmitJobFields);
export type SubmitJobInput = z.output<typeof SubmitJobBody>;

export const IdempotencyKey = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY_LENGTH)
  .describe("Any unique string. The same key with the same submission within 24 hours answers the first job instead of creating a second one, so a retried submission is safe.");
