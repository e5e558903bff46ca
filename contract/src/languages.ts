/**
 * Languages a job may name: `language`, the spoken language as a
 * hint for speech-to-text, and `caption_language`, the language captions,
 * sidecars and clip text are translated into. ISO 639-1 codes, lower case.
 *
 * SPEECH_LANGUAGES are the languages Workers AI's speech-to-text model
 * (@cf/openai/whisper-large-v3-turbo, OpenAI Whisper's language set) takes
 * as its `language` option; CAPTION_LANGUAGES are those of the translation
 * model (@cf/meta/m2m100-1.2b, M2M-100's 100 languages) for which the engine
 * image has a font (every script below is covered by fonts-dejavu-core,
 * fonts-noto-core and fonts-noto-cjk; container/test/captions/fonts.test.ts checks).
 */
import { z } from "zod";

/** Code -> English name, for documents and the dashboard's menus. */
export const LANGUAGE_NAMES = {
  af: "Afrikaans", am: "Amharic", ar: "Arabic", as: "Assamese", az: "Azerbaijani", ba: "Bashkir", be: "Belarusian",
  bg: "Bulgarian", bn: "Bengali", bo: "Tibetan", br: "Breton", bs: "Bosnian", ca: "Catalan", cs: "Czech", cy: "Welsh",
  da: "Danish", de: "German", el: "Greek", en: "English", es: "Spanish", et: "Estonian", eu: "Basque", fa: "Persian",
  fi: "Finnish", fo: "Faroese", fr: "French", gl: "Galician", gu: "Gujarati", ha: "Hausa", he: "Hebrew", hi: "Hindi",
  hr: "Croatian", ht: "Haitian Creole", hu: "Hungarian", hy: "Armenian", id: "Indonesian", is: "Icelandic", it: "Italian",
  ja: "Japanese", ka: "Georgian", kk: "Kazakh", km: "Khmer", kn: "Kannada", ko: "Korean", la: "Latin", lb: "Luxembourgish",
  ln: "Lingala", lo: "Lao", lt: "Lithuanian", lv: "Latvian", mg: "Malagasy", mi: "Maori", mk: "Macedonian", ml: "Malayalam",
  mn: "Mongolian", mr: "Marathi", ms: "Malay", mt: "Maltese", my: "Burmese", ne: "Nepali", nl: "Dutch", nn: "Norwegian Nynorsk",
  no: "Norwegian", oc: "Occitan", pa: "Punjabi", pl: "Polish", ps: "Pashto", pt: "Portuguese", ro: "Romanian", ru: "Russian",
  sa: "Sanskrit", sd: "Sindhi", si: "Sinhala", sk: "Slovak", sl: "Slovenian", sn: "Shona", so: "Somali", sq: "Albanian",
  sr: "Serbian", su: "Sundanese", sv: "Swedish", sw: "Swahili", ta: "Tamil", te: "Telugu", tg: "Tajik", th: "Thai",
  tk: "Turkmen", tl: "Tagalog", tr: "Turkish", tt: "Tatar", uk: "Ukrainian", ur: "Urdu", uz: "Uzbek", vi: "Vietnamese",
  yi: "Yiddish", yo: "Yoruba", zh: "Chinese",
  // M2M-100 only (no speech-to-text):
  ast: "Asturian", ceb: "Cebuano", ff: "Fulah", fy: "Western Frisian", ga: "Irish", gd: "Scottish Gaelic", ig: "Igbo",
  ilo: "Ilocano", jv: "Javanese", lg: "Ganda", ns: "Northern Sotho", or: "Odia", ss: "Swati", tn: "Tswana", wo: "Wolof",
  xh: "Xhosa", zu: "Zulu",
} as const satisfies Record<string, string>;
export type LanguageCode = keyof typeof LANGUAGE_NAMES;

/** Whisper's languages (the model's `language` option); `jw` is Whisper's own code for Javanese, written `jv` here. */
export const SPEECH_LANGUAGES = [
  "af", "am", "ar", "as", "az", "ba", "be", "bg", "bn", "bo", "br", "bs", "ca", "cs", "cy", "da", "de", "el", "en", "es",
  "et", "eu", "fa", "fi", "fo", "fr", "gl", "gu", "ha", "he", "hi", "hr", "ht", "hu", "hy", "id", "is", "it", "ja", "jv",
  "ka", "kk", "km", "kn", "ko", "la", "lb", "ln", "lo", "lt", "lv", "mg", "mi", "mk", "ml", "mn", "mr", "ms", "mt", "my",
  "ne", "nl", "nn", "no", "oc", "pa", "pl", "ps", "pt", "ro", "ru", "sa", "sd", "si", "sk", "sl", "sn", "so", "sq", "sr",
  "su", "sv", "sw", "ta", "te", "tg", "th", "tk", "tl", "tr", "tt", "uk", "ur", "uz", "vi", "yi", "yo", "zh",
] as const satisfies readonly LanguageCode[];

/** M2M-100's languages: what captions can be translated into (and from). */
export const CAPTION_LANGUAGES = [
  "af", "am", "ar", "ast", "az", "ba", "be", "bg", "bn", "br", "bs", "ca", "ceb", "cs", "cy", "da", "de", "el", "en", "es",
  "et", "fa", "ff", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha", "he", "hi", "hr", "ht", "hu", "hy", "id", "ig", "ilo",
  "is", "it", "ja", "jv", "ka", "kk", "km", "kn", "ko", "lb", "lg", "ln", "lo", "lt", "lv", "mg", "mk", "ml", "mn", "mr",
  "ms", "my", "ne", "nl", "no", "ns", "oc", "or", "pa", "pl", "ps", "pt", "ro", "ru", "sd", "si", "sk", "sl", "so", "sq",
  "sr", "ss", "su", "sv", "sw", "ta", "th", "tl", "tn", "tr", "uk", "ur", "uz", "vi", "wo", "xh", "yi", "yo", "zh", "zu",
] as const satisfies readonly LanguageCode[];

export const SpeechLanguage = z.enum(SPEECH_LANGUAGES);
export type SpeechLanguage = z.infer<typeof SpeechLanguage>;
export const CaptionLanguage = z.enum(CAPTION_LANGUAGES);
export type CaptionLanguage = z.infer<typeof CaptionLanguage>;

/** Whisper names Javanese `jw`; everywhere else in the service it is ISO 639-1 `jv`. */
export function whisperLanguageCode(code: SpeechLanguage): string {
  return code === "jv" ? "jw" : code;
}

/** Languages written right to left (their captions are laid out as one right-to-left run). */
export const RIGHT_TO_LEFT_LANGUAGES: readonly string[] = ["ar", "fa", "he", "ps", "sd", "ur", "yi"];

/**
 * The language part of a tag as transcript sources give it ("en", "en-US",
 * "pt_BR", "english"); null when it is not a code this service knows.
 */
export function normalizeLanguage(tag: string | null | undefined): LanguageCode | null {
  if (!tag) return null;
  const lower = tag.trim().toLowerCase();
  const code = lower.split(/[-_]/)[0] ?? "";
  if (code === "jw") return "jv";
  if (code in LANGUAGE_NAMES) return code as LanguageCode;
  const byName = (Object.entries(LANGUAGE_NAMES) as [LanguageCode, string][]).find(([, name]) => name.toLowerCase() === lower);
  return byName ? byName[0] : null;
}
