import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import type { z } from "zod";
import { CAPTION_FONTS, CAPTION_LANGUAGES, SPEECH_LANGUAGES } from "#contract";
import { AppError, type ErrorCode, type FieldError } from "./errors.ts";

/** Turns zod issues into the problem document's `errors: [{path, message}]`; `root` names the input as a whole. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[], root = "(body)"): FieldError[] {
  return issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join(".") : root,
    message: issue.message,
  }));
}

const TARGET_NAMES: Record<keyof ValidationTargets, string> = {
  json: "request body",
  form: "form body",
  query: "query string",
  param: "path parameters",
  header: "request headers",
  cookie: "cookies",
};

type ValidationResult = { target: keyof ValidationTargets } & (
  | { success: true }
  | { success: false; error: { issues: readonly z.core.$ZodIssue[] } }
);

/**
 * Fields whose bad values have a code of their own: a request
 * whose every problem is in such fields answers that code instead of
 * invalid_request, and `allowed_values` where the field has a fixed set.
 */
const FIELD_CODES: Record<string, { code: ErrorCode; allowed?: readonly string[] }> = {
  caption_font: { code: "unknown_font", allowed: CAPTION_FONTS },
  caption_color: { code: "invalid_color" },
  caption_highlight_color: { code: "invalid_color" },
  caption_outline_color: { code: "invalid_color" },
  caption_box_color: { code: "invalid_color" },
  language: { code: "unsupported_language", allowed: SPEECH_LANGUAGES },
  caption_language: { code: "unsupported_language", allowed: CAPTION_LANGUAGES },
};

/** The specific code shared by every issue, or null (then the request is invalid_request). */
function specificCode(issues: readonly z.core.$ZodIssue[]): { code: ErrorCode; allowed?: readonly string[] } | null {
  const codes = issues.map((issue) => FIELD_CODES[String(issue.path.at(-1) ?? "")] ?? null);
  const first = codes[0];
  if (!first || codes.some((c) => c?.code !== first.code)) return null;
  // One field's list is the answer's; two fields with one code (language, caption_language) list none.
  const sameField = issues.every((issue) => issue.path.at(-1) === issues[0]!.path.at(-1));
  return sameField ? first : { code: first.code };
}

/**
 * The error for input that failed its schema: invalid_request listing every
 * field problem, or the code of the fields concerned (FIELD_CODES).
 * `invalid` says what was invalid ("The request body is invalid"); `root`
 * names the input as a whole in `errors`.
 */
export function invalidInput(issues: readonly z.core.$ZodIssue[], invalid: string, root = "(body)"): AppError {
  const errors = fieldErrors(issues, root);
  const specific = specificCode(issues);
  if (specific) {
    return new AppError(specific.code, `${invalid}: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}.`, {
      errors,
      ...(specific.allowed ? { extra: { allowed_values: [...specific.allowed] } } : {}),
    });
  }
  return new AppError("invalid_request", `${invalid}.`, { errors });
}

/**
 * The one validation hook of the project: a failure becomes one AppError
 * (invalidInput), rendered by app.onError as problem+json. Used by
 * `validate()` below and as the `defaultHook` of every OpenAPIHono app
 * (src/http/api-app.ts).
 */
export function rejectInvalid(result: ValidationResult): void {
  if (!result.success) throw invalidInput(result.error.issues, `The ${TARGET_NAMES[result.target]} is invalid`);
}

/**
 * `validate("json", schema)`: @hono/zod-validator with `rejectInvalid`, for
 * the routes outside the public document (admin, engine channel). Handlers
 * read the parsed value with c.req.valid(target).
 */
export function validate<Target extends keyof ValidationTargets, Schema extends z.ZodType>(
  target: Target,
  schema: Schema,
) {
  return zValidator(target, schema, (result) => rejectInvalid({ ...result, target }));
}
