/**
 * The judgement stage (docs/judgement.md), run by runJob between the
 * analysis and the renders: the candidate pool goes to the Worker's /judge
 * with its sentences, and comes back ranked on the model's verdict combined
 * with the signals, with tighter edges, the post, key words and, for a
 * source longer than ten minutes, chapters. Never fails the job: without a
 * transcript, without an answer, or with an answer that judged nothing, the
 * clips are the signals' best, and the judgement says why.
 */
import { MAX_CHAPTER_TITLE_CHARS, type Chapter, type JobJudgement, type JudgeResult, type StartJob, type Transcript } from "#contract";
import { log } from "../shared/log.ts";
import type { JobReporter } from "../channel/report.ts";
import type { Candidate } from "../shared/types.ts";
import { combine, type CombineLimits } from "./combine.ts";
import { judgeRequest, sectionsOf } from "./request.ts";

export interface JudgeStageRequest {
  job: StartJob;
  reporter: Pick<JobReporter, "judge">;
  /** Candidates, best signal first (several times the clips asked for). */
  pool: Candidate[];
  transcript: Transcript | null;
  limits: CombineLimits;
  sourceSeconds: number;
  /** Why there is no transcript, for the fallback reason. */
  transcriptReason: string | null;
}

export interface JudgeStageResult {
  candidates: Candidate[];
  /** Each candidate's index in the pool (what the pool's parallel lists, e.g. prompt matches, follow). */
  order: number[];
  judgement: JobJudgement;
  chapters: Chapter[];
}

/** The pool is best signal first already (the analysis's picks, then the next windows; a prompt's matches in their ranking): its head. */
function signals(pool: Candidate[], count: number, reason: string, chapters: Chapter[] = []): JudgeStageResult {
  const head = pool.slice(0, count);
  return { candidates: head, order: head.map((_, index) => index), judgement: { judged_by: "signals", model: null, fallback_reason: reason.slice(0, 300) }, chapters };
}

/** Chapter titles: the model's, else the section's first words. */
function chaptersFrom(sections: { id: number; start: number; text: string }[], titles: JudgeResult["chapters"]): Chapter[] {
  const byId = new Map(titles.map((t) => [t.id, t.title]));
  return sections.map((s) => {
    const own = byId.get(s.id);
    const words = s.text.split(/\s+/).slice(0, 8).join(" ");
    const fallback = Array.from(words).length > MAX_CHAPTER_TITLE_CHARS ? `${Array.from(words).slice(0, MAX_CHAPTER_TITLE_CHARS - 1).join("")}…` : words;
    return { title: own ?? fallback, start_seconds: Math.round(s.start * 1000) / 1000 };
  });
}

export async function judgeStage(req: JudgeStageRequest): Promise<JudgeStageResult> {
  const count = req.job.config.max_clips;
  const jobId = req.job.job_id;
  if (!req.transcript) return signals(req.pool, count, `No transcript to judge the clips from. ${req.transcriptReason ?? ""}`.trim());
  const built = judgeRequest(req.job, req.pool, req.transcript, req.limits, req.sourceSeconds);
  const sections = sectionsOf(req.transcript, req.limits.from, req.limits.to);
  if (!built) return signals(req.pool, count, "No candidate clip has words to judge.", chaptersFrom(sections, []));
  const answer = await req.reporter.judge(built.request);
  if (!answer) {
    log.warn("job_judge_unanswered", { job_id: jobId });
    return signals(req.pool, count, "The judgement request got no answer.", chaptersFrom(built.request.sections, []));
  }
  log.info("job_judged", { job_id: jobId, judged_by: answer.judged_by, fallback: answer.fallback_reason, ...answer.usage });
  const chapters = chaptersFrom(built.request.sections, answer.chapters);
  if (answer.judged_by === "signals") return signals(req.pool, count, answer.fallback_reason ?? "The model judged no clip.", chapters);
  const verdicts = new Map(answer.verdicts.map((v) => [v.id, v]));
  const sentencesOf = new Map(built.request.candidates.map((c) => [c.id, c.sentences]));
  const items = req.pool.map((candidate) => {
    const id = [...built.byId].find(([, c]) => c === candidate)?.[0];
    return { candidate, verdict: id === undefined ? null : (verdicts.get(id) ?? null), sentences: id === undefined ? [] : (sentencesOf.get(id) ?? []) };
  });
  const emphasise = (req.job.config.caption_emphasis ?? "keywords") === "keywords";
  const ranked = combine(items, req.limits, count, emphasise);
  return { candidates: ranked.map((r) => r.candidate), order: ranked.map((r) => r.index), judgement: { judged_by: "model", model: answer.model, fallback_reason: answer.fallback_reason }, chapters };
}
