-- Slack delivers an event again when it thinks we missed it (x-slack-retry-num). Each event id is
-- recorded on first delivery, so a retry never runs a second round. Old receipts are pruned.
CREATE TABLE slack_event_receipts (
  event_id    TEXT PRIMARY KEY,
  team_id     TEXT,
  received_at INTEGER NOT NULL
);
CREATE INDEX slack_event_receipts_at ON slack_event_receipts(received_at);
