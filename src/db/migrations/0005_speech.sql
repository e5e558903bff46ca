-- Speech: the job's transcript summary, the clips' words, titles and
-- captions, and the caption settings of saved configurations. The transcript
-- itself (words and sentences) lives in R2 at transcripts/{job_id}.json.

-- An SRT/WebVTT file named at submission (fetched by the engine like video_url).
ALTER TABLE jobs ADD COLUMN captions_url TEXT;
-- Where the transcript came from (workers_ai, subtitle_track, platform_subtitles,
-- captions_url); NULL when the job has none.
ALTER TABLE jobs ADD COLUMN transcript_source TEXT;
ALTER TABLE jobs ADD COLUMN transcript_language TEXT;
ALTER TABLE jobs ADD COLUMN transcript_word_count INTEGER;
-- Why a completed job has no transcript, as the engine reported it.
ALTER TABLE jobs ADD COLUMN transcript_unavailable_reason TEXT;

ALTER TABLE clips ADD COLUMN text TEXT;
ALTER TABLE clips ADD COLUMN title TEXT;
ALTER TABLE clips ADD COLUMN captions_burned INTEGER NOT NULL DEFAULT 0;
-- 1 when clips/{job_id}/{idx}.vtt and .srt were uploaded.
ALTER TABLE clips ADD COLUMN sidecars INTEGER NOT NULL DEFAULT 0;

-- Existing configurations take the schema's defaults.
ALTER TABLE configs ADD COLUMN captions TEXT NOT NULL DEFAULT 'both';
ALTER TABLE configs ADD COLUMN caption_style TEXT NOT NULL DEFAULT 'bold';
ALTER TABLE configs ADD COLUMN caption_position TEXT NOT NULL DEFAULT 'bottom';
