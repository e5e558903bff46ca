/**
 * A tool's input schema as the MCP SDK takes it (a Standard Schema with JSON
 * Schema), built from a zod schema: `tools/list` advertises the zod schema's
 * JSON Schema unchanged, and validation runs the zod schema too. What differs
 * from handing the SDK the zod schema itself is a failure: the SDK would
 * answer it with its own message, while every other failure of this server
 * carries the API's problem code. So validation never fails here: it hands
 * the tool either the parsed arguments or the invalid_request problem (each
 * field's path and message, as a REST 400 lists them), and the tool answers
 * that problem as its error.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { AppError } from "../http/errors";
import { fieldErrors } from "../http/validate";

export type ToolArgs<S extends z.ZodType> = { ok: true; args: z.output<S> } | { ok: false; error: AppError };

export function toolInput<S extends z.ZodType>(schema: S, toolName: string): StandardSchemaWithJSON<unknown, ToolArgs<S>> {
  const standard = schema["~standard"];
  return {
    "~standard": {
      version: 1,
      vendor: "clipjobs",
      jsonSchema: standard.jsonSchema,
      validate(value: unknown) {
        const parsed = schema.safeParse(value);
        if (parsed.success) return { value: { ok: true, args: parsed.data } };
        // A problem with the arguments as a whole (an unknown member) is named as such, not as a request body.
        const errors = fieldErrors(parsed.error.issues).map((e) => (e.path === "(body)" ? { ...e, path: "(arguments)" } : e));
        const error = new AppError("invalid_request", `The arguments of ${toolName} are invalid.`, { errors });
        return { value: { ok: false, error } };
      },
    },
  };
}
