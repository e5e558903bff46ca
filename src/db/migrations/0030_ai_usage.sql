-- The Workers AI usage each job caused (src/ai/usage.ts): model calls, tokens
-- in and out (the answer's own counts where it gives them, else estimated),
-- seconds of audio transcribed (also the job's transcription allowance's
-- counter) and estimated neurons at the published per-model prices.
ALTER TABLE jobs ADD COLUMN ai_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN ai_tokens_in INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN ai_tokens_out INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN ai_audio_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN ai_neurons REAL NOT NULL DEFAULT 0;
