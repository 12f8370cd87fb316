// Retention and forget-me for everything derived from what people wrote.
//
// Retention (MASCOT_RETENTION_DAYS): messages, director decisions (their states quote the
// conversation), feedback, crisis events and every training table that records whose words it
// holds (a `people` column, see migrations/005) older than the limit are deleted, at start-up and
// then hourly.
//
// Forget-me (Store.forgetUser calls forgetDerived): besides the person's messages and feedback,
// every training row that holds their words (tables with a `people` column listing
// "platform:userId") and their crisis events go.
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Db } from '../store/db.ts';

const DAY_MS = 86_400_000;
const PURGE_EVERY_MS = 60 * 60_000;

/** Tables that carry a `people` column: derived training data, found by their schema. */
function peopleTables(db: Db): string[] {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  return tables.filter((t) => (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(t) as string[]).includes('people'));
}

function hasColumn(db: Db, table: string, column: string): boolean {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]).includes(column);
}

/** Delete the training rows and crisis events derived from one person's words; counts per table. */
export function forgetDerived(db: Db, platform: string, userId: string): Record<string, number> {
  const person = `${platform}:${userId}`;
  const removed: Record<string, number> = {};
  db.transaction(() => {
    for (const table of peopleTables(db)) {
      const n = db.prepare(`DELETE FROM "${table}" WHERE EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(people) THEN people ELSE '[]' END) WHERE value = ?)`).run(person).changes;
      if (n > 0) removed[table] = n;
    }
    const events = db.prepare('DELETE FROM safety_events WHERE platform = ? AND author_id = ?').run(platform, userId).changes;
    if (events > 0) removed.safety_events = events;
  })();
  return removed;
}

/** Delete conversation data older than `cutoff` (ms since epoch); counts per table. */
export function purgeOlderThan(db: Db, cutoff: number): Record<string, number> {
  const removed: Record<string, number> = {};
  const count = (table: string, n: number) => {
    if (n > 0) removed[table] = (removed[table] ?? 0) + n;
  };
  db.transaction(() => {
    // Newer messages may point at an older decision (logged a moment before): unlink, then delete.
    db.prepare('UPDATE messages SET decision_id = NULL WHERE decision_id IN (SELECT id FROM decisions WHERE at < ?)').run(cutoff);
    count('messages', db.prepare('DELETE FROM messages WHERE at < ?').run(cutoff).changes);
    count('decisions', db.prepare('DELETE FROM decisions WHERE at < ?').run(cutoff).changes);
    count('feedback', db.prepare('DELETE FROM feedback WHERE at < ?').run(cutoff).changes);
    count('safety_events', db.prepare('DELETE FROM safety_events WHERE at < ?').run(cutoff).changes);
    for (const table of peopleTables(db)) if (hasColumn(db, table, 'at')) count(table, db.prepare(`DELETE FROM "${table}" WHERE at < ?`).run(cutoff).changes);
  })();
  return removed;
}

export interface Retention {
  /** Purge now; returns what was removed. */
  purge(): Record<string, number>;
  stop(): void;
}

/** Purge at start-up and hourly when MASCOT_RETENTION_DAYS is set; a no-op otherwise. */
export function setUpRetention(config: Config, log: Logger, db: Db, now: () => number = Date.now): Retention {
  const days = config.MASCOT_RETENTION_DAYS;
  if (days === undefined) return { purge: () => ({}), stop: () => {} };
  const purge = () => {
    try {
      const removed = purgeOlderThan(db, now() - days * DAY_MS);
      if (Object.keys(removed).length > 0) log.info({ days, removed }, 'retention: old conversation data deleted');
      return removed;
    } catch (err) {
      log.error({ err: (err as Error).message }, 'retention purge failed; will try again in an hour');
      return {};
    }
  };
  purge();
  const timer = setInterval(purge, PURGE_EVERY_MS);
  timer.unref();
  return { purge, stop: () => clearInterval(timer) };
}
