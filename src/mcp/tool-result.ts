/**
 * What a tool answers. A result is its JSON as structured content and, as the
 * MCP specification asks for clients that read text only, the same JSON (or a
 * text made for reading, e.g. a transcript) as text. An error is an MCP tool
 * error (`isError: true`, so the model sees it and can correct itself)
 * carrying the API's problem: `code: detail` and each field's problem as
 * text, the problem document (code, detail, errors, retry_after_seconds ...)
 * as structured content.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { DomainError } from "../domain/errors.ts";
import { AppError, problemBody } from "../http/errors.ts";

export function toolResult(data: Record<string, unknown>, text?: string): CallToolResult {
  return {
    content: [{ type: "text", text: text ?? JSON.stringify(data, null, 2) }],
    structuredContent: data,
  };
}

export function toolError(error: DomainError, requestId: string): CallToolResult {
  const lines = [`${error.code}: ${error.message}`];
  for (const field of error.errors ?? []) lines.push(`- ${field.path}: ${field.message}`);
  const retryAfter = error.headers?.["Retry-After"];
  if (retryAfter !== undefined) lines.push(`Retry after ${retryAfter} seconds.`);
  return {
    isError: true,
    content: [{ type: "text", text: lines.join("\n") }],
    structuredContent: problemBody(error, requestId),
  };
}

/** Anything that is not a DomainError is a bug: logged with the request id, answered without details. */
export function unexpectedToolError(err: unknown, requestId: string, toolName: string): CallToolResult {
  console.error(`[${requestId}] tool ${toolName} failed`, err);
  return toolError(new AppError("internal_error", "An unexpected error occurred."), requestId);
}
