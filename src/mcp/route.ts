/**
 * /mcp: the remote MCP server (Streamable HTTP) on the API's keys and
 * request window. Each request is authenticated and counted exactly as a
 * REST request is (authenticate, then the account Durable Object's admit),
 * but a refusal does not end the request: the protocol's own messages
 * (initialize, tools/list) are still answered, and every tool answers the
 * refusal (unauthorized, rate_limited) as its MCP tool error, which a model
 * can read and act on. The per-address limit in front of authentication
 * still answers 429, as for any request.
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { Hono, type Context } from "hono";
import type { AppEnv, AuthInfo } from "../http/app-env";
import { authenticate } from "../http/auth";
import { readBodyCapped } from "../http/capped-body";
import { AppError } from "../http/errors";
import { rateLimit } from "../http/rate-limit";
import { mcpServer } from "./server";
import type { McpCaller } from "./tool";

export const MCP_PATH = "/mcp";
/** Tool arguments are small; a JSON-RPC body larger than this is refused (413 payload_too_large problem+json) before it is parsed. */
export const MAX_MCP_BODY_BYTES = 64 * 1024;

async function resolveCaller(c: Context<AppEnv>): Promise<McpCaller> {
  let auth: AuthInfo | null = null;
  try {
    await authenticate(c, async () => {
      auth = c.get("auth");
      await rateLimit(c, async () => {});
    });
  } catch (err) {
    // A refusal of the key or of the account's window stops the tools; anything else (the per-address limit) stops the request.
    if (err instanceof AppError && (err.code === "unauthorized" || (err.code === "rate_limited" && auth !== null))) return { ok: false, error: err };
    throw err;
  }
  if (auth === null) throw new Error("authenticate passed without setting auth");
  return { ok: true, auth };
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
