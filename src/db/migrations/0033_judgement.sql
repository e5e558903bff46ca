-- Clips judged by a language model (docs/judgement.md).

-- Per clip: the model's sub-scores (JSON {hook, payoff, standalone, energy};
-- NULL when signals alone judged it), who judged it, and the post's
-- description and hashtags (the title is `title`).
ALTER TABLE clips ADD COLUMN scores_json TEXT;
ALTER TABLE clips ADD COLUMN judged_by TEXT;
ALTER TABLE clips ADD COLUMN description TEXT;
ALTER TABLE clips ADD COLUMN hashtags_json TEXT;

-- Per job: who judged its clips, with which model, and why signals did
-- (NULL for jobs completed before judgement existed); its chapters (JSON
-- [{title, start_seconds}], sources longer than ten minutes).
ALTER TABLE jobs ADD COLUMN judged_by TEXT;
ALTER TABLE jobs ADD COLUMN judge_model TEXT;
ALTER TABLE jobs ADD COLUMN judge_fallback_reason TEXT;
ALTER TABLE jobs ADD COLUMN chapters_json TEXT;

-- The job's judgement budget (src/engine/judge-budget.ts): model calls made
-- and input tokens sent for it, checked and counted in one statement.
ALTER TABLE jobs ADD COLUMN judge_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN judge_tokens INTEGER NOT NULL DEFAULT 0;

-- Saved configurations: caption_emphasis (off | keywords).
ALTER TABLE configs ADD COLUMN caption_emphasis TEXT NOT NULL DEFAULT 'keywords';
