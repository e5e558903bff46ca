/**
 * /mcp: the remote MCP server (Streamable HTTP) on the API's keys and
 * request window. Each request is authenticated and counted exactly as a
 * REST request is (authenticate, then the account Durable Object's admit),
 * but a refusal does not end the request: the protocol's own messages
 * (initialize, tools/list) are still answered, and every tool answers the
 * refusal (unauthorized, rate_limited) as its MCP tool error, which a model
 * can read and act on. The per-address limit in front of authentication
 * still answers 429, as for any request.
 *
 * A JSON-RPC batch (2025-era clients may send up to 100 messages in one POST)
 * counts one request per JSON-RPC request in it, as that many POSTs would:
 * the window grants as many as it has room for, at most that many of the
 * batch's tool calls run, and each tool call beyond them answers
 * rate_limited with its retry_after_seconds (protocol requests such as
 * tools/list are answered whatever the window says, as for a single POST).
 * Batches are served rather than refused because the 2025-03-26 revision
 * of the protocol lets a client send them and the SDK's fallback serves them.
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { Hono, type Context } from "hono";
import type { AppEnv, AuthInfo } from "../http/app-env.ts";
import { authenticate } from "../http/auth.ts";
import { readBodyCapped } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { DomainError } from "../domain/errors.ts";
import { admitRequest, rateLimited, type Admission } from "../http/rate-limit.ts";
import { WINDOW_SECONDS } from "../account/request-window.ts";
import { mcpServer } from "./server.ts";
import type { McpCaller } from "./tool.ts";

export const MCP_PATH = "/mcp";
/** Tool arguments are small; a JSON-RPC body larger than this is refused (413 payload_too_large problem+json) before it is parsed. */
export const MAX_MCP_BODY_BYTES = 64 * 1024;
/** The most messages the MCP SDK serves in one batch (a larger one is refused with 400 before any work). */
export const MAX_MCP_BATCH = 100;

function isRequestMessage(message: unknown): boolean {
  if (message === null || typeof message !== "object") return false;
  const { method, id } = message as { method?: unknown; id?: unknown };
  return typeof method === "string" && (typeof id === "string" || typeof id === "number");
}

/**
 * How many requests a POST counts as in the window: the JSON-RPC requests of
 * a batch (notifications and responses do no work), at least one. Read from
 * a copy of the body, so the original is still read (and capped) once the
 * request is admitted; a body that is too large or not JSON counts one, and is
 * refused there or by the SDK.
 */
async function requestCost(request: Request): Promise<number> {
  if (request.method !== "POST" || !request.body) return 1;
  try {
    const body = JSON.parse(new TextDecoder().decode(await readBodyCapped(request.clone(), MAX_MCP_BODY_BYTES))) as unknown;
    if (!Array.isArray(body) || body.length > MAX_MCP_BATCH) return 1;
    return Math.max(1, body.filter(isRequestMessage).length);
  } catch {
    return 1;
  }
}

/** The refusal of the tool calls of a batch beyond what the window granted. */
function beyondGrant(admission: Admission, cost: number): AppError {
  return rateLimited(
    admission.limit,
    admission.retryAfterSeconds,
    `Rate limit of ${admission.limit} requests per ${WINDOW_SECONDS} seconds: this batch counts ${cost} requests and the window had room for ${admission.granted}; this tool call was not run.`,
  );
}

async function resolveCaller(c: Context<AppEnv>): Promise<McpCaller> {
  let auth: AuthInfo | null = null;
  let admitted: McpCaller | null = null;
  try {
    await authenticate(c, async () => {
      auth = c.get("auth");
      const cost = await requestCost(c.req.raw);
      const admission = await admitRequest(c, cost);
      admitted = { ok: true, auth, permits: { left: admission.granted, refusal: admission.granted < cost ? beyondGrant(admission, cost) : null } };
    });
  } catch (err) {
    // A refusal of the key or of the account's window stops the tools; anything else (the per-address limit) stops the request.
    if (err instanceof DomainError && (err.code === "unauthorized" || (err.code === "rate_limited" && auth !== null))) return { ok: false, error: err };
    throw err;
  }
  if (admitted === null) throw new Error("authenticate passed without admitting the request");
  return admitted;
}

export const mcp = new Hono<AppEnv>().all("/", async (c) => {
  const caller = await resolveCaller(c);
  const requestId = c.get("requestId");
  const call = {
    env: c.env,
    caller,
    origin: new URL(c.req.url).origin,
    requestId,
    waitUntil: (work: Promise<unknown>) => c.executionCtx.waitUntil(work),
  };
  const handler = createMcpHandler(() => mcpServer(call), {
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
    onerror: (error) => console.warn(`[${requestId}] mcp: ${error.message}`),
  });
  // Read here, counting, so an oversized message gets the API's 413 problem+json, with or without Content-Length.
  const request = c.req.raw.body ? new Request(c.req.raw, { body: await readBodyCapped(c.req.raw, MAX_MCP_BODY_BYTES) }) : c.req.raw;
  const response = await handler.fetch(request);
  // Through the context, so the headers set so far (Request-Id, RateLimit) stay on the answer.
  return c.newResponse(response.body, response);
});
