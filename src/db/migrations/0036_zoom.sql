-- Saved configurations: zoom (off | emphasis), the punch-in on vocal emphasis.
ALTER TABLE configs ADD COLUMN zoom TEXT NOT NULL DEFAULT 'off';

-- Per clip: where the picture pushed in (JSON [{start_seconds, end_seconds}],
-- source seconds; NULL reads as none).
ALTER TABLE clips ADD COLUMN zooms_json TEXT;
