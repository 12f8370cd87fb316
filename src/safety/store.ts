// Persistence for the safety gate: crisis events (so a quiet period survives a restart and
// moderators can review what happened) and per-server safety settings.
import type { Db } from '../store/db.ts';
import type { CrisisCategory } from './language.ts';

export interface SafetyEventRow {
  channelKey: string;
  platform: string;
  spaceId?: string;
  channelId: string;
  messageId: string;
  /** Absent when the author opted out of logging. */
  authorId?: string;
  category: CrisisCategory | 'unspecified';
  source: 'rules' | 'lexical' | 'model';
  patterns: string[];
  responded: boolean;
  alerted: boolean;
  quietUntil: number;
  at: number;
}

export interface SafetyEvent extends SafetyEventRow {
  id: number;
}

/** Settings of one server or workspace; '*' as spaceId holds the platform-wide defaults. */
export interface SpaceSafetySettings {
  resources?: string;
  alertChannel?: string;
  quietMinutes?: number;
}

export const ALL_SPACES = '*';

interface EventDbRow {
  id: number;
  channelKey: string;
  platform: string;
  spaceId: string | null;
  channelId: string;
  messageId: string;
  authorId: string | null;
  category: CrisisCategory | 'unspecified';
  source: 'rules' | 'lexical' | 'model';
  patterns: string;
  responded: number;
  alerted: number;
  quietUntil: number;
  at: number;
}

const EVENT_COLUMNS = `id, channel_key AS channelKey, platform, space_id AS spaceId, channel_id AS channelId, message_id AS messageId,
  author_id AS authorId, category, source, patterns_json AS patterns, responded, alerted, quiet_until AS quietUntil, at`;

function toEvent(r: EventDbRow): SafetyEvent {
  return {
    id: r.id,
    channelKey: r.channelKey,
    platform: r.platform,
    ...(r.spaceId !== null ? { spaceId: r.spaceId } : {}),
    channelId: r.channelId,
    messageId: r.messageId,
    ...(r.authorId !== null ? { authorId: r.authorId } : {}),
    category: r.category,
    source: r.source,
    patterns: JSON.parse(r.patterns) as string[],
    responded: r.responded === 1,
    alerted: r.alerted === 1,
    quietUntil: r.quietUntil,
    at: r.at,
  };
}

export class SafetyStore {
  constructor(readonly db: Db) {}

  recordEvent(e: SafetyEventRow): number {
    const info = this.db
      .prepare(
        `INSERT INTO safety_events (channel_key, platform, space_id, channel_id, message_id, author_id, category, source, patterns_json, responded, alerted, quiet_until, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(e.channelKey, e.platform, e.spaceId ?? null, e.channelId, e.messageId, e.authorId ?? null, e.category, e.source, JSON.stringify(e.patterns), e.responded ? 1 : 0, e.alerted ? 1 : 0, e.quietUntil, e.at);
    return Number(info.lastInsertRowid);
  }

  /** The end of the latest quiet period of a channel (0 when there never was one). */
  quietUntil(channelKey: string): number {
    return (this.db.prepare('SELECT MAX(quiet_until) FROM safety_events WHERE channel_key = ?').pluck().get(channelKey) as number | null) ?? 0;
  }

  /** When the calm message was last posted and moderators last alerted in a channel (0: never). */
  lastActions(channelKey: string): { responded: number; alerted: number } {
    const r = this.db
      .prepare('SELECT MAX(CASE WHEN responded = 1 THEN at END) AS responded, MAX(CASE WHEN alerted = 1 THEN at END) AS alerted FROM safety_events WHERE channel_key = ?')
      .get(channelKey) as { responded: number | null; alerted: number | null };
    return { responded: r.responded ?? 0, alerted: r.alerted ?? 0 };
  }

  /** Newest events first, optionally of one platform. */
  events(limit = 50, platform?: string): SafetyEvent[] {
    const rows = platform
      ? this.db.prepare(`SELECT ${EVENT_COLUMNS} FROM safety_events WHERE platform = ? ORDER BY at DESC, id DESC LIMIT ?`).all(platform, limit)
      : this.db.prepare(`SELECT ${EVENT_COLUMNS} FROM safety_events ORDER BY at DESC, id DESC LIMIT ?`).all(limit);
    return (rows as EventDbRow[]).map(toEvent);
  }

  /** Settings of one space merged over the platform-wide row. */
  spaceSettings(platform: string, spaceId: string | undefined): SpaceSafetySettings {
    const read = (space: string): SpaceSafetySettings => {
      const r = this.db
        .prepare('SELECT resources, alert_channel AS alertChannel, quiet_minutes AS quietMinutes FROM safety_spaces WHERE platform = ? AND space_id = ?')
        .get(platform, space) as { resources: string | null; alertChannel: string | null; quietMinutes: number | null } | undefined;
      if (!r) return {};
      return {
        ...(r.resources !== null ? { resources: r.resources } : {}),
        ...(r.alertChannel !== null ? { alertChannel: r.alertChannel } : {}),
        ...(r.quietMinutes !== null ? { quietMinutes: r.quietMinutes } : {}),
      };
    };
    return { ...read(ALL_SPACES), ...(spaceId ? read(spaceId) : {}) };
  }

  /** Set fields of a space's settings; `null` clears a field, absent fields stay as they are. */
  setSpaceSettings(platform: string, spaceId: string, change: { [K in keyof SpaceSafetySettings]?: SpaceSafetySettings[K] | null }, actor: string): void {
    this.db.transaction(() => {
      this.db
        .prepare('INSERT OR IGNORE INTO safety_spaces (platform, space_id, updated_by, updated_at) VALUES (?, ?, ?, ?)')
        .run(platform, spaceId, actor, Date.now());
      const columns = { resources: 'resources', alertChannel: 'alert_channel', quietMinutes: 'quiet_minutes' } as const;
      for (const [field, column] of Object.entries(columns) as [keyof SpaceSafetySettings, string][]) {
        if (!(field in change)) continue;
        this.db.prepare(`UPDATE safety_spaces SET ${column} = ? WHERE platform = ? AND space_id = ?`).run(change[field] ?? null, platform, spaceId);
      }
      this.db.prepare('UPDATE safety_spaces SET updated_by = ?, updated_at = ? WHERE platform = ? AND space_id = ?').run(actor, Date.now(), platform, spaceId);
    })();
  }
}
