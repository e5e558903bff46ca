-- Saved configurations: zoom (off | emphasis), the punch-in on vocal emphasis.
ALTER TABLE configs ADD COLUMN zoom TEXT NOT NULL DEFAULT 'off';
