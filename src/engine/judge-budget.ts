/**
 * A job's judgement budget (judge.ts): each model call is counted in the
 * job's own D1 row before it is made, in one statement that also refuses it
 * when the job's calls or input tokens would pass their bounds, so retries,
 * a retried /judge request and concurrent windows all draw on one budget.
 */
import { JUDGE_MAX_CALLS_PER_JOB, JUDGE_MAX_INPUT_TOKENS_PER_JOB, type JudgeBudget } from "./judge.ts";

export function jobJudgeBudget(db: D1Database, jobId: string): JudgeBudget {
  return async (tokens) => {
    const row = await db
      .prepare(
        `UPDATE jobs SET judge_calls = judge_calls + 1, judge_tokens = judge_tokens + ?1
         WHERE id = ?2 AND status = 'processing' AND judge_calls + 1 <= ?3 AND judge_tokens + ?1 <= ?4
         RETURNING judge_calls`,
      )
      .bind(tokens, jobId, JUDGE_MAX_CALLS_PER_JOB, JUDGE_MAX_INPUT_TOKENS_PER_JOB)
      .first<{ judge_calls: number }>();
    return row !== null;
  };
}
