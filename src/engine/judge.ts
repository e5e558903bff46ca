/**
 * Clip judgement on Workers AI for the engine's /judge route
 * (docs/judgement.md): the request's candidates go to a text-generation model
 * in windows (judge-prompt.ts) with JSON-mode structured output, and each
 * answer is read field by field (judge-answer.ts). Never throws for the
 * model's sake: no binding, the local placeholder, timeouts, 5xx, the
 * account's quota, the job's budget and unreadable answers each leave their
 * candidates to signals, and the result says why.
 *
 * Bounds per job (judge-budget.ts, counted in D1 across requests): at most
 * JUDGE_MAX_CALLS_PER_JOB model calls (retries included) and
 * JUDGE_MAX_INPUT_TOKENS_PER_JOB estimated input tokens; each call at most
 * JUDGE_WINDOW_INPUT_TOKENS in and JUDGE_MAX_ANSWER_TOKENS out.
 */
import type { JudgeRequest, JudgeResult, JudgeVerdict } from "#contract";
import { isLocalPlaceholderError, retrying, type RetryPolicy } from "./ai-retry.ts";
import { chaptersOf, readModelOutput, verdictsOf } from "./judge-answer.ts";
import { answerSchema, judgeWindows, type JudgeWindow } from "./judge-prompt.ts";
import { withTimeout } from "../lib/timeout.ts";

/**
 * The part of the Workers AI binding (or of the REST transport of the same
 * shape) this module calls, typed structurally so the Node suites can run it
 * against the same stand-in.
 */
export interface JudgementAi {
  run(model: string, input: object, options?: { signal?: AbortSignal }): Promise<unknown>;
}

export const JUDGE_MAX_CALLS_PER_JOB = 12;
export const JUDGE_MAX_INPUT_TOKENS_PER_JOB = 60_000;
/** Windows in flight at once for one request. */
export const JUDGE_CONCURRENCY = 4;
/** One retry, all inside the engine's 30 s callback timeout. */
export const JUDGE_RETRY_POLICY: RetryPolicy = { attempts: 2, baseDelayMs: 500, attemptTimeoutMs: 20_000, budgetMs: 25_000 };

/** The job's budget: true when one more call of `tokens` input tokens fits (and is now counted). */
export type JudgeBudget = (tokens: number) => Promise<boolean>;

class BudgetSpent extends Error {
  override readonly name = "BudgetSpent";
}
class Unreadable extends Error {
  override readonly name = "Unreadable";
}

type WindowOutcome =
  | { ok: true; verdicts: JudgeVerdict[]; chapters: { id: number; title: string }[]; tokensIn: number; tokensOut: number; calls: number }
  | { ok: false; reason: string; calls: number; tokensIn: number };

/** Why a failed call left its candidates to signals, in words for the job's judgement.fallback_reason. */
function failureReason(messages: string[]): string {
  const last = messages.at(-1) ?? "";
  if (/account's Workers AI budget/i.test(last)) return "The account's Workers AI request budget was spent; the clips were judged by signals.";
  if (/budget/i.test(last)) return "The job's judgement budget is spent.";
  if (/no answer within|timed out|timeout|aborted/i.test(last)) return "The model did not answer in time.";
  if (/3036|quota|rate limit|429|capacity|3040/i.test(last)) return "Workers AI's quota or capacity was reached.";
  if (/unreadable|schema|json/i.test(last)) return "The model's answer did not fit the schema.";
  return `The model failed: ${last.slice(0, 160)}`;
}

async function judgeWindow(ai: JudgementAi, model: string, window: JudgeWindow, budget: JudgeBudget, policy: RetryPolicy): Promise<WindowOutcome> {
  let calls = 0;
  let tokensIn = 0;
  const outcome = await retrying(policy, async (timeoutMs) => {
    if (!(await budget(window.inputTokens))) throw new BudgetSpent("the job's judgement budget is spent");
    calls += 1;
    tokensIn += window.inputTokens;
    const input = {
      messages: window.messages,
      response_format: { type: "json_schema", json_schema: answerSchema() },
      max_tokens: window.maxTokens,
      temperature: 0.2,
    };
    const output = await withTimeout(timeoutMs, (signal) => ai.run(model, input, { signal }));
    const read = readModelOutput(output);
    if (!read.body) throw new Unreadable("unreadable answer: not JSON of the schema");
    return { body: read.body, usage: read.usage };
  });
  if (!outcome.ok) {
    if (outcome.local) return { ok: false, reason: "Workers AI is not reachable from local development.", calls, tokensIn };
    return { ok: false, reason: failureReason(outcome.failures), calls, tokensIn };
  }
  const { body, usage } = outcome.value;
  return {
    ok: true,
    verdicts: verdictsOf(body, window.candidates),
    chapters: chaptersOf(body, window.sections),
    tokensIn: usage.tokensIn ?? tokensIn,
    tokensOut: usage.tokensOut ?? 0,
    calls,
  };
}

function signalsOnly(reason: string): JudgeResult {
  return { judged_by: "signals", model: null, fallback_reason: reason, verdicts: [], chapters: [], usage: { calls: 0, tokens_in: 0, tokens_out: 0 } };
}

/** Judges the request's candidates; always answers (signals, with the reason, for whatever the model did not judge). */
export async function judgeCandidates(
  ai: JudgementAi | undefined,
  model: string,
  request: JudgeRequest,
  budget: JudgeBudget,
  policy: RetryPolicy = JUDGE_RETRY_POLICY,
): Promise<JudgeResult> {
  if (!ai) return signalsOnly("No Workers AI is configured on this deployment.");
  const windows = judgeWindows(request);
  const outcomes = new Array<WindowOutcome>(windows.length);
  let next = 0;
  const lane = async () => {
    while (next < windows.length) {
      const index = next;
      next += 1;
      try {
        outcomes[index] = await judgeWindow(ai, model, windows[index]!, budget, policy);
      } catch (err) {
        // Only the budget's own D1 call can throw here: its window goes to signals.
        outcomes[index] = { ok: false, reason: isLocalPlaceholderError(err) ? "Workers AI is not reachable from local development." : "The job's judgement budget could not be checked.", calls: 0, tokensIn: 0 };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(JUDGE_CONCURRENCY, windows.length) }, lane));
  const verdicts = outcomes.flatMap((o) => (o.ok ? o.verdicts : []));
  const chapters = outcomes.flatMap((o) => (o.ok ? o.chapters : []));
  const usage = {
    calls: outcomes.reduce((sum, o) => sum + o.calls, 0),
    tokens_in: outcomes.reduce((sum, o) => sum + o.tokensIn, 0),
    tokens_out: outcomes.reduce((sum, o) => sum + (o.ok ? o.tokensOut : 0), 0),
  };
  const judged = verdicts.filter((v) => v.scores !== null).length;
  const failed = outcomes.find((o): o is Extract<WindowOutcome, { ok: false }> => !o.ok);
  let reason: string | null = null;
  if (judged === 0) reason = failed?.reason ?? (windows.length === 0 ? "No candidate fitted the model's context." : "The model's answer did not fit the schema.");
  else if (judged < request.candidates.length) {
    const why = failed ? ` ${failed.reason}` : " The model's answer lacked them or did not fit the schema.";
    reason = `${request.candidates.length - judged} of ${request.candidates.length} candidates were ranked by signals alone.${why}`;
  }
  return {
    judged_by: judged > 0 ? "model" : "signals",
    model: judged > 0 ? model : null,
    fallback_reason: reason === null ? null : reason.slice(0, 300),
    verdicts,
    chapters,
    usage,
  };
}
