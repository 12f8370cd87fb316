-- Learned director versions and which one is active per pack. Every promotion, forced promotion
-- and rollback is a row of director_activations (the audit trail); replaying them per pack as a
-- stack (promote/force push, rollback pops) gives the active version: the top of the stack, or
-- none (the pack's built-in director model, if any).

CREATE TABLE director_versions (
  id             INTEGER PRIMARY KEY,
  pack           TEXT NOT NULL,
  version        TEXT NOT NULL,              -- policy version from the model's metadata
  file           TEXT NOT NULL,              -- the registered copy of the ONNX file
  sha256         TEXT NOT NULL,
  source         TEXT NOT NULL,              -- the file it was registered from
  registered_at  INTEGER NOT NULL,
  UNIQUE (pack, version)
);

CREATE TABLE director_activations (
  id             INTEGER PRIMARY KEY,
  pack           TEXT NOT NULL,
  version        TEXT,                        -- version made active; NULL when a rollback empties the stack
  previous       TEXT,                        -- version active before this row
  action         TEXT NOT NULL,               -- promote | force | rollback
  actor          TEXT NOT NULL,
  reason         TEXT NOT NULL,
  evidence_json  TEXT,                        -- the offline evaluation that justified it
  at             INTEGER NOT NULL
);
CREATE INDEX director_activations_pack ON director_activations(pack, id);
