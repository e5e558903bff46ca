/**
 * The clip page's form read into the one edit schema (jobs/clip-edit/contract.ts),
 * so the page's re-render is accepted or refused as the same PATCH body would
 * be. The form shows the clip as it is (its span, every caption word, its
 * title); only what the person changed is sent: a span edge that moved, a
 * word whose text differs (by its index), a title that differs. A form that
 * changes nothing is refused with the schema's own message.
 */
import { ClipEditBody } from "../../jobs/clip-edit/contract.ts";
import { invalidInput } from "../../http/validate.ts";

/** What the form was rendered from: the clip's published span, words and title. */
export interface ClipShown {
  start_seconds: number;
  end_seconds: number;
  title: string | null;
  words: readonly { index: number; text: string }[];
}

export interface ClipForm {
  start: string;
  end: string;
  title: string;
  /** The words' texts by index, as typed. */
  words: Map<number, string>;
}

export const WORD_FIELD_PREFIX = "word_";

function field(body: Record<string, unknown>, name: string): string {
  return typeof body[name] === "string" ? (body[name] as string).trim() : "";
}

export function clipFormFromBody(body: Record<string, unknown>): ClipForm {
  const words = new Map<number, string>();
  for (const name of Object.keys(body)) {
    const index = name.startsWith(WORD_FIELD_PREFIX) ? Number(name.slice(WORD_FIELD_PREFIX.length)) : Number.NaN;
    if (Number.isInteger(index) && index >= 0) words.set(index, field(body, name));
  }
  return { start: field(body, "start_seconds"), end: field(body, "end_seconds"), title: field(body, "title"), words };
}

export function clipFormOf(clip: ClipShown): ClipForm {
  return {
    start: seconds(clip.start_seconds),
    end: seconds(clip.end_seconds),
    title: clip.title ?? "",
    words: new Map(clip.words.map((w) => [w.index, w.text])),
  };
}

/** Seconds as the form shows them: at most three decimals, no trailing zeros. */
export function seconds(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

/** A typed number, or the text itself (the schema then says what is wrong with it). */
function number(text: string): number | string {
  const value = Number(text);
  return text !== "" && Number.isFinite(value) ? value : text;
}

/** The edit the form asks for, through the one schema: a refusal is the problem a PATCH with the same values gets. */
export function editFromForm(form: ClipForm, shown: ClipShown): ClipEditBody {
  const start = number(form.start);
  const end = number(form.end);
  const words = shown.words.filter((w) => form.words.has(w.index) && form.words.get(w.index) !== w.text).map((w) => ({ index: w.index, text: form.words.get(w.index)! }));
  const candidate = {
    start_seconds: start === shown.start_seconds || start === number(seconds(shown.start_seconds)) ? undefined : start,
    end_seconds: end === shown.end_seconds || end === number(seconds(shown.end_seconds)) ? undefined : end,
    words: words.length > 0 ? words : undefined,
    title: form.title === (shown.title ?? "") ? undefined : form.title,
  };
  const parsed = ClipEditBody.safeParse(candidate);
  if (!parsed.success) throw invalidInput(parsed.error.issues, "The edit is invalid");
  return parsed.data;
}
