-- Faces: the layout of saved configurations, and per clip what
-- its crop followed and how many faces were seen in it.

-- Existing configurations keep the single-subject framing they had.
ALTER TABLE configs ADD COLUMN layout TEXT NOT NULL DEFAULT 'single';

-- 'faces', 'activity' or 'center'. Clips rendered before this migration
-- were made by the engine that had no face reframing: their column says
-- 'center' when unknown, and faces_count 0.
ALTER TABLE clips ADD COLUMN reframe TEXT NOT NULL DEFAULT 'center';
ALTER TABLE clips ADD COLUMN faces_count INTEGER NOT NULL DEFAULT 0;
