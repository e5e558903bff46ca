/**
 * Brand settings of a clip configuration: caption font, size and
 * colours, the account's logo with its placement, and the hook title. The
 * engine draws all of them in the clip's one encode.
 */
import { z } from "zod";

/**
 * Caption fonts the engine image installs (container/Dockerfile; .ci/run
 * installs the same packages): fonts-dejavu-core, fonts-noto-core,
 * fonts-noto-cjk. Values are the fonts' family names as fontconfig knows
 * them. Whatever the choice, text in a script the font lacks is drawn with
 * the matching Noto font (CJK, Arabic, Devanagari, Hebrew...), so any
 * caption_language renders.
 */
export const CAPTION_FONTS = [
  "DejaVu Sans",
  "DejaVu Serif",
  "Noto Sans",
  "Noto Serif",
  "Noto Sans Display",
  "Noto Sans CJK SC",
  "Noto Sans CJK TC",
  "Noto Sans CJK JP",
  "Noto Sans CJK KR",
  "Noto Serif CJK SC",
  "Noto Sans Arabic",
  "Noto Naskh Arabic",
  "Noto Sans Devanagari",
  "Noto Sans Hebrew",
] as const;
export const CaptionFont = z.enum(CAPTION_FONTS);
export type CaptionFont = z.infer<typeof CaptionFont>;

/** `#RRGGBB`, either case. */
export const HEX_COLOR_PATTERN = /^#[0-9A-Fa-f]{6}$/;
export const HexColor = z.string().regex(HEX_COLOR_PATTERN, { message: "must be a colour written #RRGGBB, e.g. #FFE500" });
export type HexColor = z.infer<typeof HexColor>;

/** Where the logo sits; `off` draws none. */
export const LOGO_POSITIONS = ["off", "top-left", "top-right", "bottom-left", "bottom-right"] as const;
export const LogoPosition = z.enum(LOGO_POSITIONS);
export type LogoPosition = z.infer<typeof LogoPosition>;

/** The account's logo (PUT /api/v1/logo): PNG or JPEG by its bytes, at most this large. */
export const MAX_LOGO_BYTES = 1024 * 1024;
/** Longest side of a logo, in pixels. */
export const MAX_LOGO_PIXELS = 1024;
export const LOGO_CONTENT_TYPES = ["image/png", "image/jpeg"] as const;
export type LogoContentType = (typeof LOGO_CONTENT_TYPES)[number];

/** Longest hook title, in seconds from the clip's start. */
export const MAX_HOOK_TITLE_SECONDS = 10;

/** The brand members of ClipConfig (spread into it in vocabulary.ts). */
export const BRAND_FIELDS = {
  caption_font: CaptionFont.default("DejaVu Sans"),
  /** Percent of the style's own size (bold: 7% of the picture's shorter side; clean, boxed: 5.5%). */
  caption_size: z.number().int().min(50).max(200).default(100),
  caption_color: HexColor.default("#FFFFFF"),
  /** The word being said (style `bold`). */
  caption_highlight_color: HexColor.default("#FFE500"),
  caption_outline_color: HexColor.default("#000000"),
  /** The box behind the text (style `boxed`), drawn translucent. */
  caption_box_color: HexColor.default("#000000"),
  logo_position: LogoPosition.default("off"),
  /** The logo's width as a percent of the clip's width. */
  logo_size: z.number().int().min(5).max(50).default(15),
  logo_opacity: z.number().min(0.1).max(1).default(1),
  /** The clip's title over its first N seconds, in the caption font and colours; 0: none. */
  hook_title_seconds: z.number().int().min(0).max(MAX_HOOK_TITLE_SECONDS).default(0),
};
