/**
 * Strict parsing of subtitle files (SubRip and WebVTT) into timed cues of
 * plain text. Used for a captions_url the client named, for the source's own
 * subtitle track (which ffmpeg converts to SubRip first) and for platform
 * subtitles. Anything that is not clearly a subtitle file is refused with a
 * CaptionsParseError that says why, instead of being half-used:
 *
 * - bytes: UTF-8 (a BOM is allowed) or UTF-16 with a BOM; anything else
 *   (Latin-1, binary) is refused rather than guessed at;
 * - size and count: at most MAX_CAPTIONS_BYTES and MAX_CUES cues;
 * - every block must carry a well-formed timing line; a negative time or a
 *   cue that ends before it starts is refused;
 * - overlapping cues are legal in both formats: they are ordered by start.
 *
 * Text is reduced to plain words: markup tags (<i>, <v Speaker>, <00:01.000>),
 * ASS override blocks ({\an8}) and ASS escapes (\N, \n, \h) are removed, HTML
 * entities decoded and control characters dropped, so nothing from a file can
 * reach the caption renderer as markup.
 */

export class CaptionsParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CaptionsParseError";
  }
}

export interface Cue {
  start: number;
  end: number;
  text: string;
  /** WebVTT voice (<v Name>) when the file names one. */
  speaker?: string;
}

export interface ParsedCaptions {
  format: "srt" | "vtt";
  cues: Cue[];
}

/** 5 MiB is about 40 hours of dense subtitles. */
export const MAX_CAPTIONS_BYTES = 5 * 1024 * 1024;
/** One cue a second for over 13 hours; more than any accepted source can need. */
export const MAX_CUES = 50_000;
/** Longest cue text kept (characters); longer cues are refused as not subtitles. */
const MAX_CUE_CHARS = 2000;
/** Times past this (100 h) are not subtitle times. */
const MAX_TIME_SECONDS = 360_000;

export function decodeCaptionBytes(bytes: Uint8Array): string {
  if (bytes.length > MAX_CAPTIONS_BYTES) {
    throw new CaptionsParseError(`The captions file is larger than ${MAX_CAPTIONS_BYTES / 1024 / 1024} MiB.`);
  }
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return strictDecode("utf-16le", bytes.subarray(2));
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return strictDecode("utf-16be", bytes.subarray(2));
  const start = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return strictDecode("utf-8", bytes.subarray(start));
}

function strictDecode(encoding: string, bytes: Uint8Array): string {
  try {
    const text = new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(bytes);
    if (text.includes("\u0000")) throw new CaptionsParseError("The captions file contains NUL bytes; it is not a text subtitle file.");
    return text;
  } catch (error) {
    if (error instanceof CaptionsParseError) throw error;
    throw new CaptionsParseError(`The captions file is not valid ${encoding === "utf-8" ? "UTF-8" : "UTF-16"} text; save it as UTF-8.`);
  }
}

// The settings after the second time are ignored: `\s[^]*` never backtracks (`\s+.*` did,
// quadratically, on a long run of spaces before a line separator).
const TIMING = /^\s*((?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,3})\s*-->\s*((?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,3})(?:\s[^]*)?$/;
const NEGATIVE_TIMING = /^\s*-\s*\d.*-->|-->\s*-\s*\d/;

function parseTime(raw: string): number {
  const parts = raw.replace(",", ".").split(":");
  const seconds = Number(parts.pop());
  const minutes = Number(parts.pop());
  const hours = parts.length > 0 ? Number(parts.pop()) : 0;
  if (minutes >= 60 || seconds >= 60) throw new CaptionsParseError(`The captions file has an impossible time ${raw}.`);
  return hours * 3600 + minutes * 60 + seconds;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", lrm: "", rlm: "" };

/**
 * ASS override blocks: `{` up to the next `}` goes (a block may contain `{`,
 * as it does for libass). A block that turns drawing mode on (`\p1` ... `\p9`)
 * also takes the text after it up to the next `{`: drawings are vector
 * shapes, not words. One left-to-right pass: every character is looked at a
 * bounded number of times, whatever the file holds.
 */
function dropAssBlocks(raw: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const open = raw.indexOf("{", at);
    if (open < 0) break;
    const close = raw.indexOf("}", open + 1);
    // No block closes after this point: the rest is text.
    if (close < 0) break;
    out += raw.slice(at, open);
    at = close + 1;
    if (/\\p[1-9]/.test(raw.slice(open, close))) {
      const next = raw.indexOf("{", at);
      at = next < 0 ? raw.length : next;
    }
  }
  return out + raw.slice(at);
}

/**
 * The WebVTT voice of a tag's inside (`v Name`, `v.loud Name`): the name, or
 * undefined when the tag is not a voice. The name is what follows the
 * whitespace, at most 60 characters.
 */
function voiceName(tag: string): string | undefined {
  if (tag[0] !== "v") return undefined;
  let at = 1;
  if (tag[1] === ".") {
    at = 2;
    while (at < tag.length && !/\s/.test(tag[at]!)) at += 1;
  }
  if (at >= tag.length || !/\s/.test(tag[at]!)) return undefined;
  while (at < tag.length && /\s/.test(tag[at]!)) at += 1;
  const name = tag.slice(at);
  return name.length <= 60 ? name.trim() || undefined : undefined;
}

/**
 * Markup tags (`<i>`, `<c.loud>`, `<00:01.000>`, `<v Speaker>`): `<` up to the
 * next `>` goes. Returns the text without them and the first voice named.
 * One pass: once no `>` follows, no later `<` can close either.
 */
function dropTags(raw: string): { text: string; speaker?: string } {
  let out = "";
  let at = 0;
  let speaker: string | undefined;
  for (;;) {
    const open = raw.indexOf("<", at);
    if (open < 0) break;
    const close = raw.indexOf(">", open + 1);
    if (close < 0) break;
    out += raw.slice(at, open);
    speaker ??= voiceName(raw.slice(open + 1, close));
    at = close + 1;
  }
  out += raw.slice(at);
  return speaker === undefined ? { text: out } : { text: out, speaker };
}

/**
 * Plain words from a cue's text lines: no markup of any subtitle dialect
 * survives. Runs in time linear in the text: the block and tag scanners are
 * hand-written (a regex such as `\{[^}]*\\p[1-9][^}]*\}` backtracks
 * cubically on `{\p1{\p1...`), and every regex left has no nested or
 * adjacent unbounded quantifiers.
 */
export function plainCueText(raw: string): { text: string; speaker?: string } {
  const { text: untagged, speaker } = dropTags(dropAssBlocks(raw).replace(/\\[Nnh]/g, " "));
  const text = untagged
    .replace(/&(#\d{1,6}|#x[0-9a-f]{1,6}|[a-z]{2,6});/gi, (whole, name: string) => {
      if (name.startsWith("#")) {
        const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
        return code > 31 && code <= 0x10ffff ? String.fromCodePoint(code) : " ";
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    // Control and format characters (including bidi overrides) carry no words.
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return speaker ? { text, speaker } : { text };
}

/** Parses SRT or WebVTT text (decided by the WEBVTT signature). */
export function parseCaptions(input: string): ParsedCaptions {
  const normalised = input.replace(/^\ufeff/, "").replace(/\r\n?/g, "\n");
  const isVtt = /^WEBVTT(?:[ \t].*)?(?:\n|$)/.test(normalised);
  const blocks = normalised.split(/\n[ \t]*\n+/);
  if (isVtt) blocks.shift();
  const cues: Cue[] = [];
  for (const block of blocks) {
    const lines = block.split("\n").filter((line, i, all) => !(line.trim() === "" && (i === 0 || i === all.length - 1)));
    if (lines.length === 0) continue;
    if (isVtt && /^(NOTE|STYLE|REGION)(?:\s|$)/.test(lines[0]!)) continue;
    const timingAt = lines.findIndex((line) => line.includes("-->"));
    // SRT: optional index line then timing; WebVTT: optional identifier line then timing.
    if (timingAt < 0 || timingAt > 1) {
      throw new CaptionsParseError(`The captions file has a block without a timing line near "${lines[0]!.slice(0, 40)}".`);
    }
    if (timingAt === 1 && !isVtt && !/^\s*\d+\s*$/.test(lines[0]!)) {
      throw new CaptionsParseError(`The captions file has an unexpected line "${lines[0]!.slice(0, 40)}" before a timing line.`);
    }
    const timingLine = lines[timingAt]!;
    if (NEGATIVE_TIMING.test(timingLine)) throw new CaptionsParseError("The captions file has a negative cue time.");
    const timing = TIMING.exec(timingLine);
    if (!timing) throw new CaptionsParseError(`The captions file has a malformed timing line "${timingLine.slice(0, 60)}".`);
    const start = parseTime(timing[1]!);
    const end = parseTime(timing[2]!);
    if (end < start) throw new CaptionsParseError(`The captions file has a cue that ends (${timing[2]}) before it starts (${timing[1]}).`);
    if (end > MAX_TIME_SECONDS) throw new CaptionsParseError("The captions file has cue times beyond 100 hours.");
    const rawText = lines.slice(timingAt + 1).join("\n");
    if (rawText.length > MAX_CUE_CHARS) throw new CaptionsParseError(`The captions file has a cue longer than ${MAX_CUE_CHARS} characters.`);
    const { text, speaker } = plainCueText(rawText);
    if (text === "") continue;
    if (cues.length >= MAX_CUES) throw new CaptionsParseError(`The captions file has more than ${MAX_CUES} cues.`);
    cues.push(speaker ? { start, end, text, speaker } : { start, end, text });
  }
  if (cues.length === 0) throw new CaptionsParseError("The captions file has no cues with text.");
  cues.sort((a, b) => a.start - b.start || a.end - b.end);
  return { format: isVtt ? "vtt" : "srt", cues };
}

function parseAssTime(raw: string): number {
  const match = /^\s*(\d+):(\d{1,2}):(\d{1,2}(?:\.\d{1,3})?)\s*$/.exec(raw);
  if (!match) throw new CaptionsParseError(`The subtitle track has a malformed time "${raw.slice(0, 20)}".`);
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}

/**
 * ASS/SSA events (a subtitle track ffmpeg copied out as .ass): the [Events]
 * Format line says where Start, End and Text are; Text is everything after
 * the last separating comma. Same caps and refusals as SRT and WebVTT.
 */
export function parseAss(input: string): ParsedCaptions {
  const lines = input.replace(/^\ufeff/, "").split(/\r?\n/);
  let format: string[] | null = null;
  let inEvents = false;
  const cues: Cue[] = [];
  for (const line of lines) {
    if (/^\s*\[/.test(line)) {
      inEvents = /^\s*\[events\]/i.test(line);
      continue;
    }
    if (!inEvents) continue;
    if (/^format\s*:/i.test(line)) {
      format = line.replace(/^format\s*:/i, "").split(",").map((f) => f.trim().toLowerCase());
      continue;
    }
    if (!/^dialogue\s*:/i.test(line)) continue;
    if (!format) throw new CaptionsParseError("The subtitle track has events before their Format line.");
    const fields = line.replace(/^dialogue\s*:/i, "").split(",");
    const textAt = format.indexOf("text");
    if (textAt !== format.length - 1 || fields.length < format.length) throw new CaptionsParseError("The subtitle track has a malformed event.");
    const start = parseAssTime(fields[format.indexOf("start")] ?? "");
    const end = parseAssTime(fields[format.indexOf("end")] ?? "");
    if (end < start) throw new CaptionsParseError("The subtitle track has an event that ends before it starts.");
    const rawText = fields.slice(textAt).join(",");
    if (rawText.length > MAX_CUE_CHARS) throw new CaptionsParseError(`The subtitle track has an event longer than ${MAX_CUE_CHARS} characters.`);
    const { text } = plainCueText(rawText);
    if (text === "") continue;
    if (cues.length >= MAX_CUES) throw new CaptionsParseError(`The subtitle track has more than ${MAX_CUES} events.`);
    cues.push({ start, end, text });
  }
  if (cues.length === 0) throw new CaptionsParseError("The subtitle track has no events with text.");
  cues.sort((a, b) => a.start - b.start || a.end - b.end);
  return { format: "srt", cues };
}
