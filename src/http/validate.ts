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

/**
 * `validate("json", schema)`: @hono/zod-validator whose failures become one
 * AppError invalid_request listing every field problem. Handlers read the
 * parsed value with c.req.valid(target).
 */
export function validate<Target extends keyof ValidationTargets, Schema extends z.ZodType>(
  target: Target,
  schema: Schema,
) {
  return zValidator(target, schema, (result) => {
    if (!result.success) {
      throw new AppError("invalid_request", `The ${TARGET_NAMES[target]} is invalid.`, {
        errors: fieldErrors(result.error.issues),
      });
    }
  });
}
