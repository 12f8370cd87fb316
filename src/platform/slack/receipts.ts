// Deduplication of Slack's retried deliveries by event id, in SQLite so it holds across restarts
// and between processes sharing the database. Bolt acknowledges and hands us every delivery; the
// first one of an event id is handled, later ones are dropped.
import type { Db } from '../../store/db.ts';

/** Slack retries within minutes; a day of receipts is plenty. */
const KEEP_MS = 24 * 60 * 60 * 1000;
const PRUNE_EVERY = 500;

export class EventReceipts {
  private readonly insert;
  private readonly prune;
  private sincePrune = 0;

  constructor(db: Db) {
    this.insert = db.prepare('INSERT OR IGNORE INTO slack_event_receipts (event_id, team_id, received_at) VALUES (?, ?, ?)');
    this.prune = db.prepare('DELETE FROM slack_event_receipts WHERE received_at < ?');
  }

  /** True the first time an event id is seen; false for a retried delivery. */
  firstDelivery(eventId: string, teamId: string | undefined, at: number = Date.now()): boolean {
    if (++this.sincePrune >= PRUNE_EVERY) {
      this.sincePrune = 0;
      this.prune.run(at - KEEP_MS);
    }
    return this.insert.run(eventId, teamId ?? null, at).changes > 0;
  }
}
