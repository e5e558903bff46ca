/**
 * The D1_QUERY_COUNT switch: when it is "header", every response carries
 * `D1-Queries: <n>` and `D1-Writes: <n>`, the statements the request ran on
 * D1 before its response (work left to waitUntil is not in it). Off unless
 * set; `npm run bench:api` turns it on for its own stack to print D1 queries
 * per request for each endpoint.
 */
import { withCountedD1, type D1Counts } from "../db/query-count";

interface CountSwitch {
  D1_QUERY_COUNT?: string;
}

export function countsD1Queries(env: Env): boolean {
  return (env as Env & CountSwitch).D1_QUERY_COUNT === "header";
}

export async function fetchCountingD1(
  handler: (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>,
  request: Request,
  env: Env,
  ctx: ExecutionContext,
): Promise<Response> {
  const counts: D1Counts = { queries: 0, writes: 0 };
  const answered = await handler(request, withCountedD1(env, counts), ctx);
  const response = new Response(answered.body, answered);
  response.headers.set("D1-Queries", String(counts.queries));
  response.headers.set("D1-Writes", String(counts.writes));
  return response;
}
