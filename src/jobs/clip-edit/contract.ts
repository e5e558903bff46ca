/**
 * The one description of a clip edit (PATCH /api/v1/jobs/{job_id}/clips/{index})
 * and of a new clip cut from a completed job's source (POST
 * /api/v1/jobs/{job_id}/clips). The REST routes validate their bodies with
 * these schemas (and the OpenAPI document publishes them), the MCP tools
 * edit_clip and add_clip take them as input, and the dashboard's clip page is
 * read into them, so an input is accepted or refused the same way everywhere.
 * The checks a schema cannot make (the span inside the source and within the
 * job's clip length bounds, a word index inside the clip) are the service's,
 * with their own codes: invalid_clip_span, invalid_word (docs/editing.md).
 */
import { z } from "@hono/zod-openapi";
import {
  AspectRatio,
  BRAND_FIELDS,
  CaptionMode,
  CaptionPosition,
  CaptionStyle,
  LAYOUTS,
  MAX_EDIT_WORD_CHARS,
  REFRAME_MODES,
  RemoveSilence,
} from "#contract";

/** A new span's edges move to a sentence boundary at most this far away (`snap: true`). */
export const SNAP_WINDOW_SECONDS = 2;

/** Most corrections one edit carries. */
export const MAX_WORD_CORRECTIONS = 200;

const WordText = z
  .string()
  .min(1)
  .max(MAX_EDIT_WORD_CHARS)
  .regex(/^[^\r\n]*$/, { message: "a caption word holds no line break" })
  .describe(`The corrected word as the captions show it: 1-${MAX_EDIT_WORD_CHARS} characters, no line breaks; its timing is kept`);

export const WordCorrection = z.union([
  z.object({ index: z.number().int().min(0).describe("The word's 0-based index in the clip's words (GET the clip: `words`)"), text: WordText }).strict(),
  z
    .object({ start_seconds: z.number().nonnegative().describe("Source time of the word that starts there (within 0.05 s)"), text: WordText })
    .strict(),
]);
export type WordCorrection = z.infer<typeof WordCorrection>;

/** Per-clip overrides of the job's configuration; each is validated as in a configuration. */
export const ClipOverrides = {
  reframe: z.enum(REFRAME_MODES).optional(),
  layout: z.enum(LAYOUTS).optional(),
  aspect_ratio: AspectRatio.optional(),
  captions: CaptionMode.optional(),
  caption_style: CaptionStyle.optional(),
  caption_position: CaptionPosition.optional(),
  caption_font: BRAND_FIELDS.caption_font.unwrap().optional(),
  caption_size: BRAND_FIELDS.caption_size.unwrap().optional(),
  caption_color: BRAND_FIELDS.caption_color.unwrap().optional(),
  caption_highlight_color: BRAND_FIELDS.caption_highlight_color.unwrap().optional(),
  caption_outline_color: BRAND_FIELDS.caption_outline_color.unwrap().optional(),
  caption_box_color: BRAND_FIELDS.caption_box_color.unwrap().optional(),
  remove_silence: RemoveSilence.optional(),
  remove_fillers: z.boolean().optional(),
};
export const OVERRIDE_FIELDS = Object.keys(ClipOverrides) as (keyof typeof ClipOverrides)[];

const Title = z.string().min(1).max(120).describe("The clip's title, 1-120 characters");

export const ClipEditBody = z
  .object({
    start_seconds: z.number().nonnegative().optional().describe("New start in source seconds (extend or trim)"),
    end_seconds: z.number().positive().optional().describe("New end in source seconds; the length stays within the job's min_clip_seconds..max_clip_seconds"),
    words: z.array(WordCorrection).min(1).max(MAX_WORD_CORRECTIONS).optional().describe("Caption corrections, by index in the clip's words or by a word's start time"),
    title: Title.optional(),
    ...ClipOverrides,
  })
  .strict()
  .refine((body) => Object.values(body).some((value) => value !== undefined), { message: "an edit changes at least one member" })
  .openapi("ClipEditBody");
export type ClipEditBody = z.infer<typeof ClipEditBody>;

export const ClipAddBody = z
  .object({
    start_seconds: z.number().nonnegative().describe("Start in source seconds"),
    end_seconds: z.number().positive().describe("End in source seconds; the length stays within the job's min_clip_seconds..max_clip_seconds"),
    snap: z.boolean().optional().describe(`true: move each edge to the nearest sentence boundary of the transcript within ${SNAP_WINDOW_SECONDS} s; omitted or false: the span as given`),
    title: Title.optional(),
    ...ClipOverrides,
  })
  .strict()
  .openapi("ClipAddBody");
export type ClipAddBody = z.infer<typeof ClipAddBody>;

export const EDIT_STATUSES = ["queued", "rendering", "failed"] as const;

/** A clip's pending or failed edit; null on the clip when none is. */
export const ClipEditState = z
  .object({
    status: z.enum(EDIT_STATUSES).describe("queued, then rendering; failed keeps the published version (see error)"),
    requested: z.record(z.string(), z.unknown()).describe("The edit's body as accepted"),
    error: z.object({ code: z.string(), message: z.string() }).optional().describe("Why the render failed (status failed)"),
  })
  .openapi("ClipEditState");
export type ClipEditState = z.infer<typeof ClipEditState>;
