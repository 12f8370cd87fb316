-- Conversations, every turn, every director decision, feedback, persona overrides with their
-- audit trail, and opt-outs.

CREATE TABLE channels (
  key         TEXT PRIMARY KEY,            -- platform:channelId
  platform    TEXT NOT NULL,
  channel_id  TEXT NOT NULL,
  space_id    TEXT,
  created_at  INTEGER NOT NULL
);

-- Per-channel settings set by moderators; absent fields fall back to the pack's defaults.
CREATE TABLE channel_settings (
  channel_key TEXT NOT NULL,
  field       TEXT NOT NULL,                -- enabled | paused | pack | policy | maxBotTurns
  value_json  TEXT NOT NULL,
  PRIMARY KEY (channel_key, field)
);

CREATE TABLE messages (
  id            INTEGER PRIMARY KEY,
  channel_key   TEXT NOT NULL,
  platform_id   TEXT NOT NULL,              -- platform message id
  author_id     TEXT NOT NULL,
  author_name   TEXT NOT NULL,
  is_bot        INTEGER NOT NULL,
  persona_id    TEXT,
  text          TEXT NOT NULL,
  strategy      TEXT,
  decision_id   INTEGER REFERENCES decisions(id),
  round_id      TEXT,
  offline_voice INTEGER NOT NULL DEFAULT 0,
  at            INTEGER NOT NULL,
  UNIQUE (channel_key, platform_id)
);
CREATE INDEX messages_channel_at ON messages(channel_key, at);
CREATE INDEX messages_author ON messages(author_id);

CREATE TABLE decisions (
  id              INTEGER PRIMARY KEY,
  channel_key     TEXT NOT NULL,
  round_id        TEXT NOT NULL,
  trigger_id      TEXT NOT NULL,            -- platform id of the human message that started the round
  turn_index      INTEGER NOT NULL,         -- 0 for the first decision of the round
  pack            TEXT NOT NULL,
  state_json      TEXT NOT NULL,            -- the state the policy saw (features for learning)
  actions_json    TEXT NOT NULL,            -- action keys in slot order
  probs_json      TEXT NOT NULL,            -- full distribution, same order
  chosen          TEXT NOT NULL,            -- action key
  propensity      REAL NOT NULL,
  policy_id       TEXT NOT NULL,
  policy_version  TEXT NOT NULL,
  reason          TEXT NOT NULL,
  at              INTEGER NOT NULL
);
CREATE INDEX decisions_channel ON decisions(channel_key, at);

CREATE TABLE feedback (
  id            INTEGER PRIMARY KEY,
  channel_key   TEXT NOT NULL,
  message_id    TEXT,                        -- platform id of the rated persona message, if any
  round_id      TEXT,
  user_id       TEXT NOT NULL,
  kind          TEXT NOT NULL,               -- reaction | rating
  value         REAL NOT NULL,               -- +1 / -1 for reactions, 1..5 for ratings
  note          TEXT,
  at            INTEGER NOT NULL
);
CREATE INDEX feedback_user ON feedback(user_id);

-- Current persona overrides: scope is '*' (everywhere) or a channel key.
CREATE TABLE persona_overrides (
  pack        TEXT NOT NULL,
  persona_id  TEXT NOT NULL,
  scope       TEXT NOT NULL,
  field       TEXT NOT NULL,
  value_json  TEXT NOT NULL,
  PRIMARY KEY (pack, persona_id, scope, field)
);

-- Every change to a persona or channel setting: who, when, old and new value.
CREATE TABLE settings_audit (
  id          INTEGER PRIMARY KEY,
  target      TEXT NOT NULL,                 -- persona:<pack>/<id>@<scope> | channel:<key>
  field       TEXT NOT NULL,
  old_json    TEXT,                          -- NULL: the file's value / default
  new_json    TEXT,                          -- NULL: reset to the file's value / default
  actor       TEXT NOT NULL,
  action      TEXT NOT NULL,                 -- set | reset | rollback
  at          INTEGER NOT NULL
);
CREATE INDEX settings_audit_target ON settings_audit(target, id);

CREATE TABLE opt_outs (
  platform    TEXT NOT NULL,
  user_id     TEXT NOT NULL,
  at          INTEGER NOT NULL,
  PRIMARY KEY (platform, user_id)
);
