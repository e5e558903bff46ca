/**
 * Form fields -> ClipConfig, validated by the contract's schema itself (the
 * one the API and the engine use). Form values are text: digits become
 * numbers, empty fields are left out so the schema's defaults apply, and
 * anything else goes to the schema as typed, which then names the problem.
 */
import type { z } from "zod";
import { ClipConfig } from "#contract";
import type { FieldErrors } from "../components/form.tsx";
import type { ConfigFormValues } from "../components/config-form.tsx";

const NUMERIC_FIELDS = new Set([
  "resolution",
  "min_clip_seconds",
  "max_clip_seconds",
  "max_clips",
  "caption_size",
  "logo_size",
  "logo_opacity",
  "hook_title_seconds",
]);
/** Every member of the contract's configuration is a field of the form. */
const CONFIG_FIELDS = Object.keys(ClipConfig.shape) as (keyof ClipConfig)[];
/** Sent as the text "true" or "false" (a select), read as a boolean. */
const BOOLEAN_FIELDS = new Set(["remove_fillers"]);

/** Announced at the top of the form (role="alert"); each field names its own problem. */
export const FIELDS_NEED_ATTENTION = "Some values need attention: see the messages next to the fields.";

export type ConfigInput = { ok: true; config: ClipConfig } | { ok: false; values: ConfigFormValues; errors: FieldErrors; general: string[] };

/** The schema's verdict in words for a form (the API keeps zod's own wording). */
function friendlyMessage(issue: z.core.$ZodIssue, field: string): string {
  switch (issue.code) {
    case "too_small":
      return `Must be at least ${String(issue.minimum)}.`;
    case "too_big":
      return `Must be at most ${String(issue.maximum)}.`;
    case "invalid_type":
      return NUMERIC_FIELDS.has(field) ? "Enter a whole number." : "Choose one of the listed options.";
    case "invalid_union":
    case "invalid_value":
      return "Choose one of the listed options.";
    case "invalid_format":
      return "Enter a colour written #RRGGBB.";
    default:
      return issue.message;
  }
}

export function configFromForm(body: Record<string, unknown>): ConfigInput {
  const candidate: Record<string, unknown> = {};
  const values = {} as ConfigFormValues;
  for (const field of CONFIG_FIELDS) {
    const raw = typeof body[field] === "string" ? (body[field] as string).trim() : "";
    values[field] = raw;
    if (raw === "") continue;
    if (NUMERIC_FIELDS.has(field) && /^-?\d+(\.\d+)?$/.test(raw)) candidate[field] = Number(raw);
    else if (BOOLEAN_FIELDS.has(field) && (raw === "true" || raw === "false")) candidate[field] = raw === "true";
    else candidate[field] = raw;
  }
  const parsed = ClipConfig.safeParse(candidate);
  if (parsed.success) return { ok: true, config: parsed.data };
  const errors: FieldErrors = {};
  const general: string[] = [];
  for (const issue of parsed.error.issues) {
    const field = issue.path[0];
    if (typeof field === "string") errors[field] ??= friendlyMessage(issue, field);
    else general.push(issue.message);
  }
  if (Object.keys(errors).length > 0) general.unshift(FIELDS_NEED_ATTENTION);
  return { ok: false, values, errors, general };
}
