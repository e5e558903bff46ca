import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import type { z } from "zod";
import { AppError, type FieldError } from "./errors";

/** Turns zod issues into the problem document's `errors: [{path, message}]`. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[]): FieldError[] {
  return issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join(".") : "(body)",
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
 * The one validation hook of the project: a failure becomes one AppError
 * invalid_request listing every field problem (rendered by app.onError as
 * problem+json). Used by `validate()` below and as the `defaultHook` of every
 * OpenAPIHono app (src/http/api-app.ts).
 */
export function rejectInvalid(result: ValidationResult): void {
  if (!result.success) {
    throw new AppError("invalid_request", `The ${TARGET_NAMES[result.target]} is invalid.`, {
      errors: fieldErrors(result.error.issues),
    });
  }
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
