/**
 * One MCP tool: its name, a description written for a model, a zod input
 * schema, and what it runs for an authenticated, admitted caller. The
 * wrapper answers every failure as a tool error carrying the API's problem:
 * the caller's (a bad key, the request window), the arguments'
 * (invalid_request with each field), the service's (not_found ...), or
 * internal_error for anything unexpected.
 */
import type { CallToolResult, McpServer, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { AuthInfo } from "../http/app-env.ts";
import { AppError } from "../http/errors.ts";
import { DomainError } from "../domain/errors.ts";
import { toolInput } from "./tool-input.ts";
import { toolError, unexpectedToolError } from "./tool-result.ts";

/**
 * The tool calls one HTTP request may run: what the request window granted
 * it (one for a single message, up to one per message of a batch, routes.ts).
 * Each tool call takes one; once none is left, `refusal` answers it.
 */
export interface ToolPermits {
  left: number;
  refusal: DomainError | null;
}

/** Who called, as the HTTP layer resolved it: admitted (with its permits), or the problem that stops every tool. */
export type McpCaller = { ok: true; auth: AuthInfo; permits: ToolPermits } | { ok: false; error: DomainError };

/** Takes one permit; the refusal when none is left. */
function takePermit(permits: ToolPermits): DomainError | null {
  if (permits.left > 0) {
    permits.left -= 1;
    return null;
  }
  return permits.refusal ?? new AppError("rate_limited", "This request's share of the request window is spent.");
}

/** Everything a tool call may use: the Worker's bindings and the HTTP request it came in. */
export interface McpCall {
  env: Env;
  caller: McpCaller;
  /** The origin the client reached this server on (upload URLs are given on it). */
  origin: string;
  requestId: string;
  waitUntil: (work: Promise<unknown>) => void;
}

export interface ToolContext extends Omit<McpCall, "caller"> {
  auth: AuthInfo;
}

export interface ToolDefinition<S extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  run: (args: z.output<S>, context: ToolContext) => Promise<CallToolResult>;
}

export type ToolRegistration = (server: McpServer, call: McpCall) => void;

export function defineTool<S extends z.ZodType>(tool: ToolDefinition<S>): ToolRegistration {
  return (server, call) => {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: toolInput(tool.input, tool.name), annotations: tool.annotations },
      async (parsed) => {
        if (!call.caller.ok) return toolError(call.caller.error, call.requestId);
        const refused = takePermit(call.caller.permits);
        if (refused) return toolError(refused, call.requestId);
        if (!parsed.ok) return toolError(parsed.error, call.requestId);
        try {
          return await tool.run(parsed.args, { ...call, auth: call.caller.auth });
        } catch (err) {
          return err instanceof DomainError ? toolError(err, call.requestId) : unexpectedToolError(err, call.requestId, tool.name);
        }
      },
    );
  };
}
