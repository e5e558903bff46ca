-- How each clip was framed from its source (the engine's ClipReport.framing,
-- JSON): the source's size and frame rate, the crop window and its centre's
-- path. Editor exports carry it; NULL for clips of an engine that did not
-- report it (exported as a centred crop).
ALTER TABLE clips ADD COLUMN framing_json TEXT;
