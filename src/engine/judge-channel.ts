/**
 * POST /:job_id/judge on the engine channel (#contract judgement.ts,
 * docs/judgement.md): mounted inside `callbacks`, whose token middleware
 * admits only this job's token with the `judge` scope. The engine sends its
 * candidate spans with their sentences; the answer is always 200 with a
 * JudgeResult, judged by the model or, with the reason, by signals.
 */
import { Hono, type Context } from "hono";
import { JUDGE_MAX_BODY_BYTES, JudgeRequest } from "#contract";
import { mediaType, readBodyCapped } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { jobAiRunner } from "../ai/usage.ts";
import { judgeModel } from "../settings.ts";
import { jobOf, liveJob, noteSignOfLife, type ChannelEnv } from "./channel-job.ts";
import { jobJudgeBudget } from "./judge-budget.ts";
import { judgeCandidates } from "./judge.ts";

async function judgeBody(c: Context<ChannelEnv>): Promise<JudgeRequest> {
  if (mediaType(c.req.header("Content-Type")) !== "application/json") {
    throw new AppError("unsupported_media_type", "Content-Type must be application/json.");
  }
  const text = new TextDecoder().decode(await readBodyCapped(c.req.raw, JUDGE_MAX_BODY_BYTES));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError("invalid_request", "The body is not valid JSON.");
  }
  const parsed = JudgeRequest.safeParse(json);
  if (!parsed.success) {
    throw new AppError("invalid_request", "The body does not match the contract's JudgeRequest.", {
      errors: parsed.error.issues.slice(0, 20).map((issue) => ({ path: issue.path.join(".") || "(body)", message: issue.message })),
    });
  }
  const ids = parsed.data.candidates.map((c) => c.id);
  if (new Set(ids).size !== ids.length) throw new AppError("invalid_request", "Candidate ids must be unique.");
  return parsed.data;
}

export const judgeChannel = new Hono<ChannelEnv>().post("/:job_id/judge", liveJob, async (c) => {
  const job = jobOf(c);
  const request = await judgeBody(c);
  await noteSignOfLife(c.env, job);
  const model = judgeModel(c.env);
  const result = await judgeCandidates(jobAiRunner(c.env, job.id), model, request, jobJudgeBudget(c.env.DB, job.id));
  console.log(JSON.stringify({ event: "job_judged", job_id: job.id, judged_by: result.judged_by, model, candidates: request.candidates.length, fallback: result.fallback_reason, ...result.usage }));
  return c.json(result);
});
