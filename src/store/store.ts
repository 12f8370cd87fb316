// The Store: every turn, decision, feedback, setting change and opt-out, in SQLite.
// Writes on the reply path go through `safely`, so a full disk or locked file is logged, never thrown.
import type { Decision } from '../core/types.ts';
import { actionKey } from '../core/types.ts';
import { forgetDerived } from '../privacy/retention.ts';
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.ts';

export interface MessageRow {
  channelKey: string;
  platformId: string;
  authorId: string;
  authorName: string;
  isBot: boolean;
  personaId?: string;
  text: string;
  strategy?: string;
  decisionId?: number;
  roundId?: string;
  offlineVoice?: boolean;
  /** 'pending' while a bot turn is being posted (see markPosted); default 'posted'. */
  delivery?: 'pending' | 'posted';
  at: number;
}

export interface DecisionRow {
  channelKey: string;
  roundId: string;
  triggerId: string;
  turnIndex: number;
  pack: string;
  state: unknown;
  decision: Decision;
  at: number;
}

export interface FeedbackRow {
  channelKey: string;
  messageId?: string;
  roundId?: string;
  userId: string;
  kind: 'reaction' | 'rating';
  value: number;
  note?: string;
  at: number;
}

export interface AuditEntry {
  version: number;
  field: string;
  oldValue: unknown;
  newValue: unknown;
  actor: string;
  action: 'set' | 'reset' | 'rollback';
  at: number;
}

export type OverrideScope = '*' | string;

export interface StoredTurn {
  platformId: string;
  authorId: string;
  authorName: string;
  isBot: boolean;
  personaId: string | null;
  text: string;
  strategy: string | null;
  at: number;
}

type OnError = (what: string, err: unknown) => void;

/** What a forgotten person's words and name become in logged decision states. */
const FORGOTTEN = '[forgotten]';

export class Store {
  private readonly stmts;

  constructor(
    readonly db: Db,
    private readonly onError: OnError = () => {},
  ) {
    this.stmts = {
      channel: db.prepare('INSERT OR IGNORE INTO channels (key, platform, channel_id, space_id, created_at) VALUES (?, ?, ?, ?, ?)'),
      message: db.prepare(
        `INSERT OR IGNORE INTO messages (channel_key, platform_id, author_id, author_name, is_bot, persona_id, text, strategy, decision_id, round_id, offline_voice, delivery, at)
         VALUES (@channelKey, @platformId, @authorId, @authorName, @isBot, @personaId, @text, @strategy, @decisionId, @roundId, @offlineVoice, @delivery, @at)`,
      ),
      decision: db.prepare(
        `INSERT INTO decisions (channel_key, round_id, trigger_id, turn_index, pack, state_json, actions_json, probs_json, chosen, propensity, policy_id, policy_version, reason, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      feedback: db.prepare(
        'INSERT INTO feedback (channel_key, message_id, round_id, user_id, kind, value, note, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      optedOut: db.prepare('SELECT 1 FROM opt_outs WHERE platform = ? AND user_id = ?').pluck(),
    };
  }

  private readonly statements = new Map<string, Statement>();

  /** A prepared statement, compiled once per SQL text (preparing costs more than running). */
  sql(text: string): Statement {
    let stmt = this.statements.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.statements.set(text, stmt);
    }
    return stmt;
  }

  /** Run a write that must never break the reply path. */
  safely<T>(what: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      this.onError(what, err);
      return undefined;
    }
  }

  ensureChannel(key: string, platform: string, channelId: string, spaceId?: string): void {
    this.safely('channel', () => this.stmts.channel.run(key, platform, channelId, spaceId ?? null, Date.now()));
  }

  /** Insert a turn; duplicates (same channel and platform id) are ignored. Returns the row id. */
  logMessage(m: MessageRow): number | undefined {
    return this.safely('message', () => {
      const info = this.stmts.message.run({
        channelKey: m.channelKey,
        platformId: m.platformId,
        authorId: m.authorId,
        authorName: m.authorName,
        isBot: m.isBot ? 1 : 0,
        personaId: m.personaId ?? null,
        text: m.text,
        strategy: m.strategy ?? null,
        decisionId: m.decisionId ?? null,
        roundId: m.roundId ?? null,
        offlineVoice: m.offlineVoice ? 1 : 0,
        delivery: m.delivery ?? 'posted',
        at: m.at,
      });
      return info.changes > 0 ? Number(info.lastInsertRowid) : undefined;
    });
  }

  /** Was this platform message logged before (a redelivery after a restart)? */
  hasMessage(channelKey: string, platformId: string): boolean {
    return this.safely('message lookup', () => this.sql('SELECT 1 FROM messages WHERE channel_key = ? AND platform_id = ?').pluck().get(channelKey, platformId) === 1) ?? false;
  }

  /** A pending bot turn was accepted by the platform: record its platform message id. */
  markPosted(rowId: number, platformId: string): void {
    this.safely('message delivery', () => this.sql("UPDATE messages SET platform_id = ?, delivery = 'posted' WHERE id = ?").run(platformId, rowId));
  }

  /** A pending bot turn was never posted (the platform refused it, or the round was cancelled first). */
  dropPending(rowId: number): void {
    this.safely('message delivery', () => this.sql("DELETE FROM messages WHERE id = ? AND delivery = 'pending'").run(rowId));
  }

  logDecision(d: DecisionRow): number | undefined {
    return this.safely('decision', () => {
      const info = this.stmts.decision.run(
        d.channelKey,
        d.roundId,
        d.triggerId,
        d.turnIndex,
        d.pack,
        JSON.stringify(d.state),
        JSON.stringify(d.decision.actions),
        JSON.stringify(d.decision.probabilities),
        actionKey(d.decision.action),
        d.decision.propensity,
        d.decision.policyId,
        d.decision.policyVersion,
        d.decision.reason,
        d.at,
      );
      return Number(info.lastInsertRowid);
    });
  }

  addFeedback(f: FeedbackRow): void {
    this.safely('feedback', () =>
      this.stmts.feedback.run(f.channelKey, f.messageId ?? null, f.roundId ?? null, f.userId, f.kind, f.value, f.note ?? null, f.at),
    );
  }

  /**
   * A person took a reaction back: delete one of their reaction rows with that value on that turn
   * (the newest). Rows keep what a reaction meant (+1 / -1), not its emoji, so 👍 and 👍🏽 withdraw
   * alike. Returns whether a row was deleted; a reaction that was never stored deletes nothing.
   */
  withdrawReaction(r: { channelKey: string; messageId: string; userId: string; value: number }): boolean {
    return (
      this.safely('feedback withdrawal', () =>
        this.sql(
          `DELETE FROM feedback WHERE id = (SELECT id FROM feedback
             WHERE channel_key = ? AND message_id = ? AND user_id = ? AND kind = 'reaction' AND value = ? ORDER BY id DESC LIMIT 1)`,
        ).run(r.channelKey, r.messageId, r.userId, r.value).changes > 0,
      ) ?? false
    );
  }

  /** The last `limit` turns of a channel, oldest first (to restore a session after a restart). */
  recentTurns(channelKey: string, limit: number): StoredTurn[] {
    const rows = this
      .sql(
        `SELECT platform_id AS platformId, author_id AS authorId, author_name AS authorName, is_bot AS isBot,
                persona_id AS personaId, text, strategy, at
         FROM messages WHERE channel_key = ? ORDER BY at DESC, id DESC LIMIT ?`,
      )
      .all(channelKey, limit) as (Omit<StoredTurn, 'isBot'> & { isBot: number })[];
    return rows.reverse().map((r) => ({ ...r, isBot: r.isBot === 1 }));
  }

  /** Platform id of the newest bot turn in a channel and its round (for feedback on the last round). */
  lastRound(channelKey: string): { roundId: string; messageIds: string[] } | undefined {
    const row = this
      .sql('SELECT round_id AS roundId FROM messages WHERE channel_key = ? AND is_bot = 1 AND round_id IS NOT NULL ORDER BY at DESC, id DESC LIMIT 1')
      .get(channelKey) as { roundId: string } | undefined;
    if (!row) return undefined;
    const ids = this.sql('SELECT platform_id FROM messages WHERE round_id = ? ORDER BY id').pluck().all(row.roundId) as string[];
    return { roundId: row.roundId, messageIds: ids };
  }

  /** The persona and round of one of our posted messages, if it is ours. */
  botMessage(channelKey: string, platformId: string): { personaId: string; roundId: string | null } | undefined {
    return this
      .sql('SELECT persona_id AS personaId, round_id AS roundId FROM messages WHERE channel_key = ? AND platform_id = ? AND is_bot = 1 AND persona_id IS NOT NULL')
      .get(channelKey, platformId) as { personaId: string; roundId: string | null } | undefined;
  }

  // --- turns posted as several messages ------------------------------------------------------

  /**
   * A turn went out as several platform messages (`partIds` in order; the first is the id the
   * turn is logged under): remember every part, so feedback on any of them reaches the turn.
   */
  recordParts(channelKey: string, partIds: readonly string[]): void {
    if (partIds.length < 2) return;
    const turnId = partIds[0]!;
    const insert = 'INSERT OR IGNORE INTO message_parts (channel_key, part_id, turn_id, part_index) VALUES (?, ?, ?, ?)';
    this.safely('message parts', () => this.db.transaction(() => partIds.forEach((id, i) => this.sql(insert).run(channelKey, id, turnId, i)))());
  }

  /** The platform id a turn is logged under, given the id of any of its parts (a one-part turn: the id itself). */
  turnOf(channelKey: string, platformId: string): string {
    const turnId = this.safely('message parts lookup', () =>
      this.sql('SELECT turn_id FROM message_parts WHERE channel_key = ? AND part_id = ?').pluck().get(channelKey, platformId) as string | undefined,
    );
    return turnId ?? platformId;
  }

  /**
   * The conversation one of our persona messages in a channel is logged in: the channel itself or
   * one of its threads (`<channelKey>:<thread>`). Slack's reaction events name the channel and the
   * message but not the thread.
   */
  conversationOfBotMessage(channelKey: string, platformId: string): string | undefined {
    // A range rather than LIKE, so the (channel_key, platform_id) index serves it (':' + 1 is ';').
    return this
      .sql(
        `SELECT channel_key FROM messages
         WHERE platform_id = ? AND is_bot = 1 AND persona_id IS NOT NULL AND (channel_key = ? OR (channel_key > ? AND channel_key < ?))
         LIMIT 1`,
      )
      .pluck()
      .get(platformId, channelKey, `${channelKey}:`, `${channelKey};`) as string | undefined;
  }

  // --- opt-outs and forget-me -------------------------------------------------------------

  isOptedOut(platform: string, userId: string): boolean {
    return this.safely('opt-out lookup', () => this.stmts.optedOut.get(platform, userId) === 1) ?? false;
  }

  setOptOut(platform: string, userId: string, optedOut: boolean): void {
    if (optedOut) this.sql('INSERT OR IGNORE INTO opt_outs (platform, user_id, at) VALUES (?, ?, ?)').run(platform, userId, Date.now());
    else this.sql('DELETE FROM opt_outs WHERE platform = ? AND user_id = ?').run(platform, userId);
  }

  /** Delete a person's stored messages and feedback on a platform (and their words in logged decisions). Returns what was removed. */
  forgetUser(platform: string, userId: string): { messages: number; feedback: number } {
    return this.db.transaction(() => {
      const words = this
        .sql('SELECT channel_key AS channelKey, text FROM messages WHERE author_id = ? AND is_bot = 0 AND channel_key LIKE ?')
        .all(userId, `${platform}:%`) as { channelKey: string; text: string }[];
      this.redactDecisionStates(words);
      const messages = this
        .sql('DELETE FROM messages WHERE author_id = ? AND is_bot = 0 AND channel_key LIKE ?')
        .run(userId, `${platform}:%`).changes;
      const feedback = this.sql('DELETE FROM feedback WHERE user_id = ? AND channel_key LIKE ?').run(userId, `${platform}:%`).changes;
      forgetDerived(this.db, platform, userId);
      return { messages, feedback };
    })();
  }

  /**
   * Logged decision states quote the human turn and the recent transcript (see summarizeState):
   * replace a forgotten person's words and name there too, so forgetting leaves no copy behind.
   */
  private redactDecisionStates(words: { channelKey: string; text: string }[]): void {
    const byChannel = new Map<string, Set<string>>();
    for (const w of words) byChannel.set(w.channelKey, (byChannel.get(w.channelKey) ?? new Set()).add(w.text));
    const update = this.sql('UPDATE decisions SET state_json = ? WHERE id = ?');
    for (const [channelKey, texts] of byChannel) {
      const rows = this.sql('SELECT id, state_json AS s FROM decisions WHERE channel_key = ?').all(channelKey) as { id: number; s: string }[];
      for (const row of rows) {
        const state = JSON.parse(row.s) as { human?: unknown; humanName?: unknown; transcript?: { name?: unknown; text?: unknown; personaId?: unknown }[] };
        let hit = false;
        if (typeof state.human === 'string' && texts.has(state.human)) {
          state.human = FORGOTTEN;
          state.humanName = FORGOTTEN;
          hit = true;
        }
        for (const turn of state.transcript ?? []) {
          if (turn.personaId == null && typeof turn.text === 'string' && texts.has(turn.text)) {
            turn.text = FORGOTTEN;
            turn.name = FORGOTTEN;
            hit = true;
          }
        }
        if (hit) update.run(JSON.stringify(state), row.id);
      }
    }
  }

  // --- channel settings ---------------------------------------------------------------------

  channelSettings(channelKey: string): Record<string, unknown> {
    const rows = this.sql('SELECT field, value_json AS v FROM channel_settings WHERE channel_key = ?').all(channelKey) as {
      field: string;
      v: string;
    }[];
    return Object.fromEntries(rows.map((r) => [r.field, JSON.parse(r.v) as unknown]));
  }

  setChannelSetting(channelKey: string, field: string, value: unknown, actor: string): void {
    const target = `channel:${channelKey}`;
    this.db.transaction(() => {
      const old = this.channelSettings(channelKey)[field];
      if (value === undefined) this.sql('DELETE FROM channel_settings WHERE channel_key = ? AND field = ?').run(channelKey, field);
      else
        this
          .sql('INSERT INTO channel_settings (channel_key, field, value_json) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET value_json = excluded.value_json')
          .run(channelKey, field, JSON.stringify(value));
      this.audit(target, field, old, value, actor, value === undefined ? 'reset' : 'set');
    })();
  }

  // --- persona overrides ----------------------------------------------------------------------

  personaTarget(pack: string, personaId: string, scope: OverrideScope): string {
    return `persona:${pack}/${personaId}@${scope}`;
  }

  /** Current overrides of one persona in one scope, field -> value. */
  personaOverrides(pack: string, personaId: string, scope: OverrideScope): Record<string, unknown> {
    const rows = this
      .sql('SELECT field, value_json AS v FROM persona_overrides WHERE pack = ? AND persona_id = ? AND scope = ?')
      .all(pack, personaId, scope) as { field: string; v: string }[];
    return Object.fromEntries(rows.map((r) => [r.field, JSON.parse(r.v) as unknown]));
  }

  /** Set (value) or clear (undefined) one override, with an audit row. */
  setPersonaOverride(pack: string, personaId: string, scope: OverrideScope, field: string, value: unknown, actor: string, action: AuditEntry['action'] = 'set'): void {
    this.db.transaction(() => {
      const old = this.personaOverrides(pack, personaId, scope)[field];
      if (value === undefined) this.sql('DELETE FROM persona_overrides WHERE pack = ? AND persona_id = ? AND scope = ? AND field = ?').run(pack, personaId, scope, field);
      else
        this
          .sql(
            'INSERT INTO persona_overrides (pack, persona_id, scope, field, value_json) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET value_json = excluded.value_json',
          )
          .run(pack, personaId, scope, field, JSON.stringify(value));
      this.audit(this.personaTarget(pack, personaId, scope), field, old, value, actor, action);
    })();
  }

  /** Change history of a persona in a scope; version N is the state after the N-th change. */
  personaHistory(pack: string, personaId: string, scope: OverrideScope): AuditEntry[] {
    return this.history(this.personaTarget(pack, personaId, scope));
  }

  /** Every change of a target, oldest first; with `last`, only the newest `last` (versions kept). */
  history(target: string, last?: number): AuditEntry[] {
    const skip = last === undefined ? 0 : Math.max(0, this.historySize(target) - last);
    const rows = this
      .sql('SELECT field, old_json AS o, new_json AS n, actor, action, at FROM settings_audit WHERE target = ? ORDER BY id LIMIT -1 OFFSET ?')
      .all(target, skip) as { field: string; o: string | null; n: string | null; actor: string; action: AuditEntry['action']; at: number }[];
    return rows.map((r, i) => ({
      version: skip + i + 1,
      field: r.field,
      oldValue: r.o === null ? undefined : (JSON.parse(r.o) as unknown),
      newValue: r.n === null ? undefined : (JSON.parse(r.n) as unknown),
      actor: r.actor,
      action: r.action,
      at: r.at,
    }));
  }

  /** How many changes a target has had: its latest version. */
  historySize(target: string): number {
    return this.sql('SELECT COUNT(*) FROM settings_audit WHERE target = ?').pluck().get(target) as number;
  }

  /** Return a persona's overrides to what they were after change `version` (0: the file's values). */
  rollbackPersona(pack: string, personaId: string, scope: OverrideScope, version: number, actor: string): void {
    const history = this.personaHistory(pack, personaId, scope);
    if (!Number.isInteger(version) || version < 0 || version > history.length)
      throw new RangeError(`version must be between 0 and ${history.length}`);
    const target: Record<string, unknown> = {};
    for (const entry of history.slice(0, version)) target[entry.field] = entry.newValue;
    this.db.transaction(() => {
      const current = this.personaOverrides(pack, personaId, scope);
      const fields = new Set([...Object.keys(current), ...Object.keys(target)]);
      for (const field of fields) {
        if (JSON.stringify(current[field]) !== JSON.stringify(target[field]))
          this.setPersonaOverride(pack, personaId, scope, field, target[field], actor, 'rollback');
      }
    })();
  }

  private audit(target: string, field: string, old: unknown, value: unknown, actor: string, action: AuditEntry['action']): void {
    this
      .sql('INSERT INTO settings_audit (target, field, old_json, new_json, actor, action, at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(target, field, old === undefined ? null : JSON.stringify(old), value === undefined ? null : JSON.stringify(value), actor, action, Date.now());
  }
}
