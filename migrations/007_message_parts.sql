-- A bot turn longer than one platform message (Discord: 2000 characters) is posted as several
-- messages, and `messages` logs the turn once, under its first message's id. Every part's id maps
-- to that turn here, so a reaction on any part is feedback on the turn.
CREATE TABLE message_parts (
  channel_key  TEXT NOT NULL,
  part_id      TEXT NOT NULL,               -- platform id of one posted message of the turn
  turn_id      TEXT NOT NULL,               -- platform id the turn is logged under (its first part)
  part_index   INTEGER NOT NULL,            -- 0 for the first part
  PRIMARY KEY (channel_key, part_id)
);
CREATE INDEX message_parts_turn ON message_parts(channel_key, turn_id);

-- Parts go with their turn (retention, forget-me, a turn that was never posted), so nothing needs
-- to know about this table to clean up.
CREATE TRIGGER message_parts_follow_turn AFTER DELETE ON messages
BEGIN
  DELETE FROM message_parts WHERE channel_key = OLD.channel_key AND turn_id = OLD.platform_id;
END;
