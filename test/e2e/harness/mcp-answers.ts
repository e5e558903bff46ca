/**
 * Reading tool answers of the MCP SDK's client, shared by the Workers-pool and
 * the end-to-end MCP suites: a result's structured content, or the problem a
 * tool error carries (`code: detail` as its first line of text, the problem
 * document as structured content), and the tool names the server lists.
 */
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { expect } from "vitest";

export type ToolAnswer = CallToolResult & { structuredContent?: Record<string, unknown> };

export interface ToolProblem extends Record<string, unknown> {
  code: string;
  detail: string;
  errors?: { path: string; message: string }[];
}

export const TOOL_NAMES = [
  "add_clip",
  "cancel_job",
  "create_upload",
  "edit_clip",
  "export_job",
  "get_job",
  "get_transcript",
  "get_usage",
  "list_configs",
  "list_jobs",
  "save_config",
  "submit_job",
];

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  return (await client.callTool({ name, arguments: args })) as ToolAnswer;
}

export function answerText(result: ToolAnswer): string {
  return result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
}

/** A successful tool answer: its structured content (its text repeats it as JSON unless the tool writes text of its own). */
export function ok(result: ToolAnswer): Record<string, unknown> {
  if (result.isError) throw new Error(`tool error: ${answerText(result)}`);
  expect(result.structuredContent).toBeDefined();
  return result.structuredContent!;
}

/** A tool error carrying the problem `code`; answers the problem document. */
export function problem(result: ToolAnswer, code: string): ToolProblem {
  expect(result.isError, answerText(result)).toBe(true);
  const body = result.structuredContent as ToolProblem;
  expect(body.code).toBe(code);
  expect(answerText(result).split("\n")[0]).toBe(`${code}: ${body.detail}`);
  expect(body.type).toBe(`/docs/errors#${code}`);
  return body;
}
