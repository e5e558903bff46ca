/**
 * The service's vocabulary: video types, clip configurations and the job
 * failure codes. The API, the dashboard, D1 rows and the engine all speak it,
 * so it lives at the bottom of src/, below every other module.
 */
import { z } from "zod";
import { BRAND_FIELDS } from "./brand.ts";
import { CaptionLanguage, SpeechLanguage } from "./languages.ts";



export const VIDEO_TYPES = ["podcast", "lecture", "gaming", "sports", "vlog", "general"] as const;
export const VideoType = z.enum(VIDEO_TYPES);
export type VideoType = z.infer<typeof VideoType>;

export const ASPECT_RATIOS = ["9:16", "1:1", "4:5", "16:9", "original"] as const;
export const AspectRatio = z.enum(ASPECT_RATIOS);
export type AspectRatio = z.infer<typeof AspectRatio>;

export const RESOLUTIONS = [720, 1080] as const;
/**
 * How the source's picture is fitted into the output (docs/framing.md):
 * `auto` (faces where there are people, the whole frame for screens, slides
 * and pictures with no subject, else the region of most activity), `faces` (a
 * camera that follows the people), `fit` (the whole frame, scaled in, over a
 * blurred and darkened copy of itself), `center` (the middle, cropped).
 */
export const REFRAME_MODES = ["center", "auto", "faces", "fit"] as const;
/**
 * Faces: `single` frames one person (or a group that fits; with two or more
 * apart, the one speaking), `split` stacks the two main faces, `auto` is single
 * but shows the two stacked while both of them speak.
 */
export const LAYOUTS = ["single", "split", "auto"] as const;
/** Punch-in (docs/framing.md): `emphasis` pushes in briefly on the clip's moments of vocal emphasis; `off` never zooms. */
export const ZOOM_MODES = ["off", "emphasis"] as const;
/** What a clip's crop actually followed (ClipReport.reframe). */
export const REFRAME_USED = ["faces", "activity", "center", "fit"] as const;

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
 * Steering. `remove_silence`: off keeps every pause; pauses
 * shortens pauses longer than 0.8 s to 0.4 s; tight shortens pauses longer
 * than 0.35 s to 0.15 s (the thresholds live in the engine, see docs/guides/steering.md).
 */
export const REMOVE_SILENCE_MODES = ["off", "pauses", "tight"] as const;
export const RemoveSilence = z.enum(REMOVE_SILENCE_MODES);
export type RemoveSilence = z.infer<typeof RemoveSilence>;

/** Whether a model-judged clip's captions set its key words in the highlight colour (docs/judgement.md). */
export const CAPTION_EMPHASIS_MODES = ["off", "keywords"] as const;
export const CaptionEmphasis = z.enum(CAPTION_EMPHASIS_MODES);
export type CaptionEmphasis = z.infer<typeof CaptionEmphasis>;

/** Longest prompt, in characters (UTF-16 code units, as JavaScript counts them). */
export const MAX_PROMPT_CHARS = 500;
/** A topic to clip, in any language the transcript may be in; it must hold more than spaces. */
export const Prompt = z
  .string()
  .max(MAX_PROMPT_CHARS)
  .regex(/\S/, { message: "prompt must contain a word" });

/**
 * The part of the source to analyse and clip, in source seconds.
 * Credits are charged on its length, not the whole source's.
 */
export const TimeRange = z
  .object({
    start_seconds: z.number().min(0),
    end_seconds: z.number().positive(),
  })
  .strict()
  .refine((r) => r.end_seconds > r.start_seconds, {
    message: "end_seconds must be greater than start_seconds",
    path: ["end_seconds"],
  });
export type TimeRange = z.infer<typeof TimeRange>;

/** What a clip had cut out of it, in source seconds (ClipReport.removed). */
export const REMOVED_KINDS = ["silence", "filler"] as const;
export const RemovedSpan = z.object({
  start_seconds: z.number().nonnegative(),
  end_seconds: z.number().nonnegative(),
  kind: z.enum(REMOVED_KINDS),
});
export type RemovedSpan = z.infer<typeof RemovedSpan>;

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
    reframe: z
      .enum(REFRAME_MODES)
      .default("auto")
      .describe(
        "How the picture fills the output. auto (default): faces where sampled frames show people; fit for screens, slides and pictures with no face or moving subject (text-like edges, or a picture that stays still); else the region of most activity. faces: a camera that keeps the people whole. fit: the whole frame scaled in over a blurred, darkened copy of itself. center: the middle, cropped. The clip's reframe field says what was used.",
      ),
    layout: z.enum(LAYOUTS).default("single"),
    zoom: z
      .enum(ZOOM_MODES)
      .default("off")
      .describe("Punch-in. emphasis: the picture pushes in smoothly (about 1.15x over 0.3 s, held, then out over 0.3 s) on the clip's moments of vocal emphasis, never cutting a framed face; the clip's zooms field lists where. off (default): no zoom."),
    captions: CaptionMode.default("both"),
    caption_style: CaptionStyle.default("bold"),
    caption_position: CaptionPosition.default("bottom"),
    /** Clips are chosen among moments whose words match this (null: no prompt). */
    prompt: Prompt.nullable().default(null),
    remove_silence: RemoveSilence.default("off"),
    /** Cut "um", "uh", "erm" and the like (needs a transcript with word times). */
    remove_fillers: z.boolean().default(false),
    // Brand: caption font, size and colours, logo, hook title (brand.ts).
    ...BRAND_FIELDS,
    /** The spoken language, as a hint to speech-to-text; null: detected. */
    language: SpeechLanguage.nullable().default(null),
    /** Captions, sidecars and clip text translated into this language; null: the spoken language. */
    caption_language: CaptionLanguage.nullable().default(null),
    /** A model-judged clip's up to three key words in caption_highlight_color (burned) and <b> (VTT); off: none. */
    caption_emphasis: CaptionEmphasis.default("keywords"),
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
  /** A job with a prompt whose video yielded no transcript to match it against. */
  "prompt_needs_transcript",
  /** time_range starts at or after the end of the source, or leaves less than min_clip_seconds of it. */
  "time_range_outside_source",
  /** The platform asks for a signed-in session (YouTube's bot check, members-only, login-only posts). */
  "source_sign_in_required",
  /** The platform says the video is private. */
  "source_private",
  /** The platform says the video was removed or is unavailable. */
  "source_unavailable",
  /** The platform does not show the video in the country the engine downloads from. */
  "source_geo_blocked",
  /** The platform asks the viewer to confirm their age. */
  "source_age_restricted",
  /** A live event that has not begun yet (or a premiere still to come). */
  "source_live",
] as const;
export const FailureCode = z.enum(FAILURE_CODES);
export type FailureCode = z.infer<typeof FailureCode>;
