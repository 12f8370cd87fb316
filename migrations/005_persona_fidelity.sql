-- Persona fidelity: judged candidate turns, preference pairs for the persona reward model, and the
-- per-turn fidelity scores behind /mascot health. Every row that holds text from a conversation
-- records whose words it holds (`people`: JSON array of "platform:userId"), so exports can leave
-- out opted-out people and forget-me can delete what was derived from a person.

-- One candidate turn for a persona in a context, with its rubric scores (1-5).
CREATE TABLE judged_candidates (
  id            INTEGER PRIMARY KEY,
  run_id        TEXT NOT NULL,               -- one `mascot judge` run
  pack          TEXT NOT NULL,
  persona_id    TEXT NOT NULL,               -- the persona it was judged as
  author_id     TEXT NOT NULL,               -- the persona that wrote it (another one for contrast candidates)
  strategy      TEXT,
  context_key   TEXT NOT NULL,               -- hash of the context, groups candidates for pairing
  context_json  TEXT NOT NULL,               -- transcript before the turn: [{name, text, isBot, personaId?}]
  text          TEXT NOT NULL,
  generator     TEXT NOT NULL,               -- model that wrote it, or 'offline-voice'
  judge         TEXT NOT NULL,               -- judge model, or 'offline-rubric'
  scores_json   TEXT NOT NULL,               -- {emotional_expressiveness, empathetic_support, consistency, relevance, social_contribution}
  mean_score    REAL NOT NULL,
  rationale     TEXT,
  channel_key   TEXT,                        -- set when the context came from a logged conversation
  people        TEXT NOT NULL DEFAULT '[]',
  at            INTEGER NOT NULL
);
CREATE INDEX judged_candidates_context ON judged_candidates(pack, persona_id, context_key);

-- A preference: for this persona in this context, `chosen` is a better turn than `rejected`.
CREATE TABLE preference_pairs (
  id            INTEGER PRIMARY KEY,
  pack          TEXT NOT NULL,
  persona_id    TEXT NOT NULL,
  context_key   TEXT NOT NULL,
  context_json  TEXT NOT NULL,
  chosen        TEXT NOT NULL,
  rejected      TEXT NOT NULL,
  -- The rejected turn's own context when it differs (feedback pairs compare turns from two moments).
  rejected_context_json TEXT,
  chosen_score  REAL,
  rejected_score REAL,
  source        TEXT NOT NULL,               -- judge | offline-rubric | feedback | rating | examples
  judge         TEXT,                        -- judge model or 'offline-rubric' where a judge decided
  channel_key   TEXT,
  people        TEXT NOT NULL DEFAULT '[]',
  at            INTEGER NOT NULL,
  UNIQUE (pack, persona_id, context_key, chosen, rejected)
);
CREATE INDEX preference_pairs_pack ON preference_pairs(pack, persona_id);

-- Fidelity of every posted persona turn under the reward model, for rolling health per channel.
CREATE TABLE fidelity_scores (
  id            INTEGER PRIMARY KEY,
  channel_key   TEXT NOT NULL,
  message_id    TEXT NOT NULL,               -- platform id of the persona's message
  pack          TEXT NOT NULL,
  persona_id    TEXT NOT NULL,
  fidelity      REAL NOT NULL,               -- 0..1, calibrated reward of the author persona
  author_prob   REAL NOT NULL,               -- softmax probability that the author wrote it (identifiability)
  identified    TEXT NOT NULL,               -- persona the model thinks wrote it
  model_version TEXT NOT NULL,
  at            INTEGER NOT NULL
);
CREATE INDEX fidelity_scores_channel ON fidelity_scores(channel_key, at);

-- Health alerts sent to moderators (so a restart neither repeats nor forgets them).
CREATE TABLE health_alerts (
  id            INTEGER PRIMARY KEY,
  channel_key   TEXT NOT NULL,
  kind          TEXT NOT NULL,               -- collapse | low-fidelity
  persona_id    TEXT,
  value         REAL NOT NULL,
  threshold     REAL NOT NULL,
  state         TEXT NOT NULL,               -- raised | cleared
  at            INTEGER NOT NULL
);
CREATE INDEX health_alerts_channel ON health_alerts(channel_key, at);
