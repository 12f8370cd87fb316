-- Care and hardening: crisis events, per-server safety settings, what crisis events keep out of
-- training data, and the delivery state of bot turns (crash safety).

-- One row per human message the safety gate recognised as a crisis. The message text itself
-- stays in `messages` (when the author is not opted out); this row records what happened.
CREATE TABLE safety_events (
  id            INTEGER PRIMARY KEY,
  channel_key   TEXT NOT NULL,
  platform      TEXT NOT NULL,
  space_id      TEXT,                        -- Discord guild / Slack team, when there is one
  channel_id    TEXT NOT NULL,
  message_id    TEXT NOT NULL,               -- platform id of the human message
  author_id     TEXT,                        -- NULL when the author opted out of logging
  category      TEXT NOT NULL,               -- suicide | self-harm | harm-others | abuse | third-party
  source        TEXT NOT NULL,               -- rules | model
  patterns_json TEXT NOT NULL,               -- ids of the patterns that matched (never the text)
  responded     INTEGER NOT NULL,            -- 1 when the calm message with resources was posted for it
  alerted       INTEGER NOT NULL,            -- 1 when moderators were alerted for it
  quiet_until   INTEGER NOT NULL,            -- personas stay quiet in the channel until then (ms)
  at            INTEGER NOT NULL             -- time of the human message (ms)
);
CREATE INDEX safety_events_channel ON safety_events(channel_key, at);
CREATE INDEX safety_events_author ON safety_events(author_id);

-- Safety settings per server or workspace ('*' = every server of the platform). Unset fields fall
-- back to the wider row, then to the pack (resources) and the environment (quiet minutes, alert channel).
CREATE TABLE safety_spaces (
  platform       TEXT NOT NULL,
  space_id       TEXT NOT NULL,
  resources      TEXT,                       -- crisis lines and who to contact, shown on a hit
  alert_channel  TEXT,                       -- platform channel id where moderators are alerted
  quiet_minutes  INTEGER,
  updated_by     TEXT NOT NULL,
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (platform, space_id)
);

-- What a crisis event keeps out of training: every message and decision of that channel from the
-- crisis message until the personas' quiet period ended and twelve more messages had been logged
-- (the director and speakers see the last twelve turns, so until then the crisis was in their
-- context). Open-ended while fewer than twelve messages followed.
CREATE VIEW training_exclusion_windows AS
SELECT e.channel_key AS channel_key,
       e.at AS from_at,
       MAX(e.quiet_until, COALESCE(
         (SELECT m.at FROM messages m WHERE m.channel_key = e.channel_key AND m.at > e.at ORDER BY m.at, m.id LIMIT 1 OFFSET 11),
         9223372036854775807)) AS until_at
FROM safety_events e;

-- Bot turns are logged as 'pending' just before they are posted and become 'posted' with the
-- platform's message id once the platform accepted them: a crash between the two leaves a row
-- that says so, never a posted turn missing from the log.
ALTER TABLE messages ADD COLUMN delivery TEXT NOT NULL DEFAULT 'posted';
