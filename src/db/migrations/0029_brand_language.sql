-- Brand and language: the brand and language members of saved
-- configurations, each account's logo, and what became of a job's requested
-- caption translation.

-- Existing configurations take the schema's defaults (src/contract/brand.ts, languages.ts).
ALTER TABLE configs ADD COLUMN caption_font TEXT NOT NULL DEFAULT 'DejaVu Sans';
ALTER TABLE configs ADD COLUMN caption_size INTEGER NOT NULL DEFAULT 100;
ALTER TABLE configs ADD COLUMN caption_color TEXT NOT NULL DEFAULT '#FFFFFF';
ALTER TABLE configs ADD COLUMN caption_highlight_color TEXT NOT NULL DEFAULT '#FFE500';
ALTER TABLE configs ADD COLUMN caption_outline_color TEXT NOT NULL DEFAULT '#000000';
ALTER TABLE configs ADD COLUMN caption_box_color TEXT NOT NULL DEFAULT '#000000';
ALTER TABLE configs ADD COLUMN logo_position TEXT NOT NULL DEFAULT 'off';
ALTER TABLE configs ADD COLUMN logo_size INTEGER NOT NULL DEFAULT 15;
ALTER TABLE configs ADD COLUMN logo_opacity REAL NOT NULL DEFAULT 1;
ALTER TABLE configs ADD COLUMN hook_title_seconds INTEGER NOT NULL DEFAULT 0;
-- NULL: detected (language) / the spoken language (caption_language).
ALTER TABLE configs ADD COLUMN language TEXT;
ALTER TABLE configs ADD COLUMN caption_language TEXT;

-- One logo per account. The image itself is private (never on {cdn_url}):
-- object_key names it in the private bucket; the engine reads it over the
-- job channel.
CREATE TABLE logos (
  account_id TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  object_key TEXT NOT NULL,
  content_type TEXT NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
  width INTEGER NOT NULL CHECK (width > 0),
  height INTEGER NOT NULL CHECK (height > 0),
  size_bytes INTEGER NOT NULL CHECK (size_bytes > 0),
  sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- A job that asked for caption_language: the language, whether the captions
-- were translated (translated, not_needed, unavailable, failed, skipped) and
-- why not. NULL when no translation was asked for.
ALTER TABLE jobs ADD COLUMN translation_language TEXT;
ALTER TABLE jobs ADD COLUMN translation_status TEXT;
ALTER TABLE jobs ADD COLUMN translation_detail TEXT;
