/**
 * The dashboard's submit form read into the one submission schema
 * (jobs/submit-contract.ts), so it is accepted or refused as the same body
 * sent to POST /api/v1/jobs or to the MCP tool submit_job would be, with the
 * same problem code. What is only the form's: an empty field is a field not
 * sent (the configuration's value), the time range is typed as clock times,
 * `auto` and `spoken` stand for null (detect the spoken language; captions
 * as spoken), and each rendering of the form carries a fresh idempotency key,
 * so a form sent twice (a double click, a resend after a dropped answer)
 * makes one job.
 */
import { SubmitJobBody, type SubmitJobInput } from "../../jobs/submit-contract.ts";
import { rangeFromForm } from "../../jobs/steering.ts";
import { invalidInput } from "../../http/validate.ts";

export interface SubmitForm {
  videoUrl: string;
  /** Set by the upload script once a file is uploaded (tus, /dashboard/uploads). */
  uploadId: string;
  videoType: string;
  configName: string;
  captionsUrl: string;
  /** Steering: empty fields leave the configuration's values. */
  prompt: string;
  rangeStart: string;
  rangeEnd: string;
  removeSilence: string;
  removeFillers: string;
  /** A language code, `auto` (detect) or empty (the configuration's). */
  language: string;
  /** A language code, `spoken` (no translation) or empty (the configuration's). */
  captionLanguage: string;
  idempotencyKey: string;
}

/** The form as first shown, with a key of its own. */
export function emptyForm(): SubmitForm {
  return {
    videoUrl: "",
    uploadId: "",
    videoType: "",
    configName: "",
    captionsUrl: "",
    prompt: "",
    rangeStart: "",
    rangeEnd: "",
    removeSilence: "",
    removeFillers: "",
    language: "",
    captionLanguage: "",
    idempotencyKey: crypto.randomUUID(),
  };
}

function field(body: Record<string, unknown>, name: string): string {
  return typeof body[name] === "string" ? (body[name] as string).trim() : "";
}

export function formFromBody(body: Record<string, unknown>): SubmitForm {
  return {
    videoUrl: field(body, "video_url"),
    uploadId: field(body, "upload_id"),
    videoType: field(body, "video_type"),
    configName: field(body, "config_name"),
    captionsUrl: field(body, "captions_url"),
    prompt: field(body, "prompt"),
    rangeStart: field(body, "range_start"),
    rangeEnd: field(body, "range_end"),
    removeSilence: field(body, "remove_silence"),
    removeFillers: field(body, "remove_fillers"),
    language: field(body, "language"),
    captionLanguage: field(body, "caption_language"),
    idempotencyKey: field(body, "idempotency_key"),
  };
}

/** An empty field is not sent; `none` (when given) is the field's token for null. */
function given(value: string, none?: string): string | null | undefined {
  if (value === "") return undefined;
  return value === none ? null : value;
}

/** The submission the form describes, through the one schema: a refusal is the problem a REST body with the same values gets. */
export function submissionFromForm(form: SubmitForm): SubmitJobInput {
  const candidate = {
    video_url: given(form.videoUrl),
    upload_id: given(form.uploadId),
    video_type: form.videoType,
    config_name: given(form.configName),
    captions_url: given(form.captionsUrl),
    prompt: given(form.prompt),
    // Clock times (mm:ss...) become seconds here; a time that is not one is invalid_time_range, as the API's check says.
    time_range: rangeFromForm(form.rangeStart, form.rangeEnd) ?? undefined,
    remove_silence: given(form.removeSilence),
    remove_fillers: form.removeFillers === "" ? undefined : form.removeFillers === "true" ? true : form.removeFillers === "false" ? false : form.removeFillers,
    language: given(form.language, "auto"),
    caption_language: given(form.captionLanguage, "spoken"),
  };
  const parsed = SubmitJobBody.safeParse(candidate);
  if (!parsed.success) throw invalidInput(parsed.error.issues, "The form is invalid");
  return parsed.data;
}
