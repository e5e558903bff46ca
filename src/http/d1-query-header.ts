/**
 * The D1_QUERY_COUNT switch, for local benches only: when it is "header",
 * every response carries
 *
 * - `D1-Queries: <n>` and `D1-Writes: <n>`: the statements the request ran
 *   on D1 before its response (work left to waitUntil is not in it);
 *   `npm run bench:api` prints them per endpoint;
 * - `D1-Totals: {json}`: the running totals of this isolate since it started,
 *   requests, waitUntil work and queue batches alike, with the written tables
 *   named, and the number of engine callbacks it served. Under `wrangler dev`
 *   one isolate runs everything, so `npm run bench:d1` reads it before and
 *   after a job to get the job's D1 writes.
 *
 * Off unless set; production never sets it.
 */
import { countsD1Queries, isolateD1Totals as totals, withCountedD1, withD1Totals, type D1Counts } from "../db/query-count.ts";

export { countsD1Queries, withD1Totals };

const ENGINE_CALLBACK = /^\/internal\/v1\/jobs\//;

export async function fetchCountingD1(
  handler: (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>,
  request: Request,
  env: Env,
  ctx: ExecutionContext,
): Promise<Response> {
  if (ENGINE_CALLBACK.test(new URL(request.url).pathname)) totals.engineCallbacks += 1;
  const counts: D1Counts = { queries: 0, writes: 0 };
  const answered = await handler(request, withCountedD1(env, counts, totals), ctx);
  const response = new Response(answered.body, answered);
  response.headers.set("D1-Queries", String(counts.queries));
  response.headers.set("D1-Writes", String(counts.writes));
  response.headers.set("D1-Totals", JSON.stringify(totals));
  return response;
}
