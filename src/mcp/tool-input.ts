/**
 * A tool's input schema as the MCP SDK takes it (a Standard Schema with JSON
 * Schema), built from a zod schema: `tools/list` advertises the zod schema's
 * JSON Schema unchanged, and validation runs the zod schema too. What differs
 * from handing the SDK the zod schema itself is a failure: the SDK would
 * answer it with its own message, while every other failure of this server
 * carries the API's problem code. So validation never fails here: it hands
 * the tool either the parsed arguments or the problem a REST body with the
 * same mistakes gets (invalid_request listing each field's path and message,
 * or a field's own code such as unsupported_language), and the tool answers
 * that problem as its error.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { AppError } from "../http/errors.ts";
import { invalidInput } from "../http/validate.ts";

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
        // The same codes as a REST body's (e.g. unsupported_language); "(arguments)" names the arguments as a whole.
        return { value: { ok: false, error: invalidInput(parsed.error.issues, `The arguments of ${toolName} are invalid`, "(arguments)") } };
      },
    },
  };
}
