/**
 * A stored transcript rendered as subtitles (WebVTT, SRT) or plain text for
 * GET /api/v1/jobs/:id/transcript?format=. One cue per sentence; a sentence
 * too long for two lines is split at word boundaries, timed by its words.
 */
import type { Transcript, TranscriptWord } from "#contract";

/** Line length readers can follow (the usual subtitle guideline), two lines per cue. */
const LINE_CHARS = 42;
const CUE_CHARS = LINE_CHARS * 2;

interface Cue {
  start: number;
  end: number;
  text: string;
}

function clock(seconds: number, separator: "." | ","): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, width = 2): string => String(n).padStart(width, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

/** One line of text: cue text never spans blank lines or carries a timing arrow. */
function flatten(text: string): string {
  return text.replace(/\s+/g, " ").replace(/-->/g, "->").trim();
}

/** Breaks text into lines of at most LINE_CHARS at spaces (a longer single word stays whole). */
function wrap(text: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > LINE_CHARS) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines.join("\n");
}

/** Splits a long sentence at word boundaries into cues of at most CUE_CHARS, timed by the words. */
function splitByWords(words: TranscriptWord[]): Cue[] {
  const cues: Cue[] = [];
  let current: TranscriptWord[] = [];
  const flush = (): void => {
    const first = current[0];
    const last = current.at(-1);
    if (first && last) cues.push({ start: first.start, end: last.end, text: flatten(current.map((w) => w.text).join(" ")) });
    current = [];
  };
  for (const word of words) {
    const length = current.reduce((sum, w) => sum + w.text.length + 1, 0) + word.text.length;
    if (current.length > 0 && length > CUE_CHARS) flush();
    current.push(word);
  }
  flush();
  return cues;
}

export function transcriptCues(transcript: Transcript): Cue[] {
  const cues: Cue[] = [];
  for (const sentence of transcript.sentences) {
    const text = flatten(sentence.text);
    if (!text) continue;
    const words = transcript.words.filter((w) => w.start >= sentence.start && w.end <= sentence.end && flatten(w.text));
    if (text.length > CUE_CHARS && words.length > 1) cues.push(...splitByWords(words));
    else cues.push({ start: sentence.start, end: Math.max(sentence.end, sentence.start), text });
  }
  return cues;
}

function escapeVtt(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function toWebVtt(transcript: Transcript): string {
  const blocks = transcriptCues(transcript).map(
    (cue) => `${clock(cue.start, ".")} --> ${clock(cue.end, ".")}\n${escapeVtt(wrap(cue.text))}`,
  );
  return `WEBVTT\n\n${blocks.join("\n\n")}${blocks.length > 0 ? "\n" : ""}`;
}

export function toSrt(transcript: Transcript): string {
  return transcriptCues(transcript)
    .map((cue, i) => `${i + 1}\n${clock(cue.start, ",")} --> ${clock(cue.end, ",")}\n${wrap(cue.text)}\n`)
    .join("\n");
}

/** One sentence per line. */
export function toPlainText(transcript: Transcript): string {
  const lines = transcript.sentences.map((s) => flatten(s.text)).filter((line) => line.length > 0);
  return lines.length > 0 ? `${lines.join("\n")}\n` : "";
}
