/**
 * One fuzz property per endpoint: generate a request, send it, run the
 * shared oracle (oracle.ts), then the endpoint's own judgement; rejected
 * requests are handed to the write guard. Runs never shrink: the service
 * keeps state between runs, so replaying a shrunk case proves nothing.
 */
import fc from "fast-check";
import { send } from "./invoke.ts";
import { checkResponse, type Operation } from "./oracle.ts";
import { matchesTemplate, toRequest as toRequestOf, type FuzzRequest } from "./requests.ts";
import type { Tally } from "./tally.ts";
import type { WriteGuard } from "./write-guard.ts";
import { fuzzParameters } from "./runs.ts";

export interface Outcome {
  status: number;
  body: unknown;
  headers: Headers;
}

export interface EndpointFuzz {
  endpoint: string;
  op: Operation;
  runs: number;
  requests: fc.Arbitrary<FuzzRequest>;
  /** Throws when the outcome is wrong for the request; may perform the cleanup an accepted request needs. */
  judge: (req: FuzzRequest, outcome: Outcome) => Promise<void> | void;
  guard?: WriteGuard;
  /** Turns a generated request into the one sent, e.g. by creating the job it names. */
  prepare?: (req: FuzzRequest) => Promise<FuzzRequest>;
}

/**
 * A request that never answers is a failure too, reported with the case that
 * caused it. Generous: one request can wait many seconds for CPU on a loaded
 * machine (CI beside other work) without being wrong; a hang never answers.
 */
const ANSWER_DEADLINE_MS = 120_000;

/** Rejects with `what()` when `promise` has not settled within `ms`. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

export function describeCase(req: FuzzRequest): string {
  const payload = typeof req.body.payload === "string" ? req.body.payload.slice(0, 80) : `${req.body.payload?.length ?? "no"} bytes`;
  return `${req.method} ${req.target.slice(0, 100)} [${req.caller.kind}, ${String(req.contentType)}, ${req.body.kind}: ${payload}]`;
}

export async function fuzzEndpoint(tally: Tally, spec: EndpointFuzz): Promise<void> {
  await spec.guard?.start();
  await fc.assert(
    fc.asyncProperty(spec.requests, async (generated) => {
      const req = spec.prepare ? await spec.prepare(generated) : generated;
      const res = await withDeadline(send(toRequestOf(req)), ANSWER_DEADLINE_MS, () => `no answer within ${ANSWER_DEADLINE_MS} ms: ${describeCase(req)}`);
      tally.record(spec.endpoint, res.status);
      let body: unknown;
      try {
        // A path outside the operation's template (e.g. an empty parameter) is another route: generic checks only.
        const op = spec.op.path !== null && matchesTemplate(spec.op.path, req.target) ? spec.op : { ...spec.op, path: null };
        body = await checkResponse(res, op);
        await spec.judge(req, { status: res.status, body, headers: res.headers });
      } catch (err) {
        throw new Error(`${describeCase(req)}: ${(err as Error).message}`, { cause: err });
      }
      if (res.status >= 400) await spec.guard?.rejected(describeCase(req));
    }),
    fuzzParameters(spec.runs),
  );
  await spec.guard?.check();
}
