// Persona-fidelity rows in SQLite (migration 005): judged candidates, preference pairs, per-turn
// fidelity scores and health alerts; and the logged conversations they are derived from, read with
// the people whose words they hold, so opted-out and forgotten people stay out of training data.
// Conversation around a crisis stays out too: logged rows inside a crisis window (the view
// training_exclusion_windows of migration 006) are never read for training, and stored candidates
// and pairs whose context holds a message from such a window are left out when read back.
import type { Db } from '../store/db.ts';
import type { JudgedSet } from './preferences.ts';
import { contextKey, type AuthoredTurn, type ContextTurn, type PreferencePair, type PreferenceSource } from './rubric.ts';

/** A logged turn with the person behind it ("platform:userId"; for a bot turn, whoever started its round). */
export interface LoggedTurn extends ContextTurn {
  rowId: number;
  channelKey: string;
  platformId: string;
  strategy: string | null;
  offlineVoice: boolean;
  /** The person whose words these are or who prompted them; null when that person was forgotten. */
  person: string | null;
  at: number;
}

export interface LoggedAuthoredTurn extends AuthoredTurn {
  platformId: string;
  channelKey: string;
  strategy: string | null;
  people: string[];
}

export interface FidelityRow {
  channelKey: string;
  messageId: string;
  pack: string;
  personaId: string;
  fidelity: number;
  authorProb: number;
  identified: string;
  modelVersion: string;
  at: number;
}

export interface AlertRow {
  channelKey: string;
  kind: 'collapse' | 'low-fidelity';
  personaId?: string;
  value: number;
  threshold: number;
  state: 'raised' | 'cleared';
  at: number;
}

/** How many turns before (and including) a turn make up its context. */
export const CONTEXT_TURNS = 8;

export class FidelityStore {
  constructor(readonly db: Db) {}

  /** Store one judged set (its candidates and kept pairs) in one transaction. */
  saveJudgedSet(set: JudgedSet, runId: string, at = Date.now()): void {
    const insert = this.db.prepare(
      `INSERT INTO judged_candidates (run_id, pack, persona_id, author_id, strategy, context_key, context_json, text, generator, judge, scores_json, mean_score, rationale, channel_key, people, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const key = contextKey(set.context.context);
    this.db.transaction(() => {
      for (const c of set.candidates)
        insert.run(runId, set.pack, set.personaId, c.authorId, c.strategy, key, JSON.stringify(set.context.context), c.text, c.authorId === set.personaId ? set.generator : `${set.generator} (as ${c.authorId})`, set.judge, JSON.stringify(c.scores), c.mean, c.rationale ?? null, set.context.channelKey ?? null, JSON.stringify(set.context.people), at);
      this.savePairs(set.pairs, at);
    })();
  }

  /** Insert pairs; a pair already stored (same persona, context and texts) is kept once. */
  savePairs(pairs: readonly PreferencePair[], at = Date.now()): number {
    const insert = this.db.prepare(
      `INSERT OR IGNORE INTO preference_pairs (pack, persona_id, context_key, context_json, chosen, rejected, rejected_context_json, chosen_score, rejected_score, source, judge, channel_key, people, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    let n = 0;
    this.db.transaction(() => {
      for (const p of pairs)
        n += insert.run(p.pack, p.personaId, contextKey(p.context), JSON.stringify(p.context), p.chosen, p.rejected, p.rejectedContext ? JSON.stringify(p.rejectedContext) : null, p.chosenScore ?? null, p.rejectedScore ?? null, p.source, p.judge ?? null, p.channelKey ?? null, JSON.stringify(p.people), at).changes;
    })();
    return n;
  }

  /** Stored pairs of a pack, leaving out any that hold words of an opted-out person or from around a crisis. */
  pairs(pack: string): PreferencePair[] {
    const optedOut = this.optedOutPeople();
    const crisis = this.crisisWindowTexts();
    const rows = this.db
      .prepare(
        `SELECT persona_id AS personaId, context_json AS c, chosen, rejected, rejected_context_json AS rc, chosen_score AS cs, rejected_score AS rs, source, judge, channel_key AS channelKey, people
         FROM preference_pairs WHERE pack = ? ORDER BY id`,
      )
      .all(pack) as { personaId: string; c: string; chosen: string; rejected: string; rc: string | null; cs: number | null; rs: number | null; source: PreferenceSource; judge: string | null; channelKey: string | null; people: string }[];
    return rows
      .map((r): PreferencePair => ({
        pack,
        personaId: r.personaId,
        context: JSON.parse(r.c) as ContextTurn[],
        chosen: r.chosen,
        rejected: r.rejected,
        ...(r.rc ? { rejectedContext: JSON.parse(r.rc) as ContextTurn[] } : {}),
        ...(r.cs !== null ? { chosenScore: r.cs } : {}),
        ...(r.rs !== null ? { rejectedScore: r.rs } : {}),
        source: r.source,
        ...(r.judge ? { judge: r.judge } : {}),
        ...(r.channelKey ? { channelKey: r.channelKey } : {}),
        people: JSON.parse(r.people) as string[],
      }))
      .filter((p) => !p.people.some((x) => optedOut.has(x)) && !touchesCrisis(crisis, p.channelKey, [...p.context, ...(p.rejectedContext ?? [])]));
  }

  /** Judged candidates written by the persona they were judged as (for persona identification). */
  judgedAuthored(pack: string): AuthoredTurn[] {
    const optedOut = this.optedOutPeople();
    const crisis = this.crisisWindowTexts();
    const rows = this.db
      .prepare(`SELECT persona_id AS personaId, context_json AS c, text, judge, channel_key AS channelKey, people FROM judged_candidates WHERE pack = ? AND author_id = persona_id ORDER BY id`)
      .all(pack) as { personaId: string; c: string; text: string; judge: string; channelKey: string | null; people: string }[];
    return rows
      .map((r) => ({ ...r, context: JSON.parse(r.c) as ContextTurn[] }))
      .filter((r) => !(JSON.parse(r.people) as string[]).some((x) => optedOut.has(x)) && !touchesCrisis(crisis, r.channelKey, r.context))
      .map((r) => ({ pack, personaId: r.personaId, context: r.context, text: r.text, source: r.judge === 'offline-rubric' ? 'offline-rubric' : 'judge' }));
  }

  /**
   * Texts of the logged messages inside crisis windows, by channel (migrations/006). A row derived
   * from a logged context is judged by what its context holds, as stored rows carry no message ids.
   */
  crisisWindowTexts(): Map<string, Set<string>> {
    const rows = this.db
      .prepare(
        `SELECT m.channel_key AS channelKey, m.text FROM messages m
         WHERE EXISTS (SELECT 1 FROM training_exclusion_windows w WHERE w.channel_key = m.channel_key AND m.at BETWEEN w.from_at AND w.until_at)`,
      )
      .all() as { channelKey: string; text: string }[];
    const out = new Map<string, Set<string>>();
    for (const r of rows) out.set(r.channelKey, (out.get(r.channelKey) ?? new Set()).add(r.text));
    return out;
  }

  /** "platform:userId" of everyone who opted out of logging. */
  optedOutPeople(): Set<string> {
    const rows = this.db.prepare('SELECT platform, user_id AS userId FROM opt_outs').all() as { platform: string; userId: string }[];
    return new Set(rows.map((r) => `${r.platform}:${r.userId}`));
  }

  // --- logged conversations -------------------------------------------------------------------------

  /** Logged turns of a channel up to and including row `uptoId`, oldest first, at most `limit`. */
  window(channelKey: string, uptoId: number, limit = CONTEXT_TURNS): LoggedTurn[] {
    const rows = this.db
      .prepare(
        `SELECT m.id AS rowId, m.channel_key AS channelKey, m.platform_id AS platformId, m.author_id AS authorId, m.author_name AS name, m.is_bot AS isBot,
                m.persona_id AS personaId, m.text, m.strategy, m.offline_voice AS offlineVoice, m.at, m.decision_id AS decisionId,
                (SELECT h.author_id FROM decisions d JOIN messages h ON h.channel_key = d.channel_key AND h.platform_id = d.trigger_id WHERE d.id = m.decision_id) AS triggerAuthor
         FROM messages m WHERE m.channel_key = ? AND m.id <= ? ORDER BY m.id DESC LIMIT ?`,
      )
      .all(channelKey, uptoId, limit) as (Omit<LoggedTurn, 'isBot' | 'offlineVoice' | 'person' | 'personaId'> & { authorId: string; isBot: number; offlineVoice: number; personaId: string | null; decisionId: number | null; triggerAuthor: string | null })[];
    const platform = channelKey.slice(0, channelKey.indexOf(':'));
    return rows.reverse().map((r) => ({
      rowId: r.rowId,
      channelKey: r.channelKey,
      platformId: r.platformId,
      name: r.name,
      text: r.text,
      isBot: r.isBot === 1,
      ...(r.personaId ? { personaId: r.personaId } : {}),
      strategy: r.strategy,
      offlineVoice: r.offlineVoice === 1,
      person: r.isBot === 1 ? (r.triggerAuthor ? `${platform}:${r.triggerAuthor}` : r.decisionId === null ? `${platform}:${r.authorId}` : null) : `${platform}:${r.authorId}`,
      at: r.at,
    }));
  }

  /** Persona turns logged while a channel used `pack` (rows whose decision names the pack). */
  loggedPersonaTurns(pack: string, since = 0): { row: number; channelKey: string; platformId: string; personaId: string; strategy: string | null }[] {
    return this.db
      .prepare(
        `SELECT m.id AS row, m.channel_key AS channelKey, m.platform_id AS platformId, m.persona_id AS personaId, m.strategy
         FROM messages m JOIN decisions d ON d.id = m.decision_id
         WHERE m.is_bot = 1 AND m.persona_id IS NOT NULL AND d.pack = ? AND m.at >= ?
           AND NOT EXISTS (SELECT 1 FROM training_exclusion_windows w WHERE w.channel_key = m.channel_key AND m.at BETWEEN w.from_at AND w.until_at) -- crisis windows (migrations/006)
         ORDER BY m.id`,
      )
      .all(pack, since) as { row: number; channelKey: string; platformId: string; personaId: string; strategy: string | null }[];
  }

  /** Human messages that started a round of `pack`: contexts for judging candidates. */
  loggedContexts(pack: string, limit: number): { context: ContextTurn[]; channelKey: string; people: string[] }[] {
    const optedOut = this.optedOutPeople();
    const rows = this.db
      .prepare(
        `SELECT DISTINCT h.id AS row, h.channel_key AS channelKey FROM decisions d JOIN messages h ON h.channel_key = d.channel_key AND h.platform_id = d.trigger_id
         WHERE d.pack = ? AND h.is_bot = 0 AND NOT EXISTS (SELECT 1 FROM training_exclusion_windows w WHERE w.channel_key = h.channel_key AND h.at BETWEEN w.from_at AND w.until_at) -- crisis windows (migrations/006)
         ORDER BY h.id DESC LIMIT ?`,
      )
      .all(pack, limit) as { row: number; channelKey: string }[];
    const out: { context: ContextTurn[]; channelKey: string; people: string[] }[] = [];
    for (const r of rows.reverse()) {
      const turns = this.window(r.channelKey, r.row);
      const people = peopleOf(turns);
      if (people === undefined || people.some((p) => optedOut.has(p))) continue;
      out.push({ context: turns.map(toContextTurn), channelKey: r.channelKey, people });
    }
    return out;
  }

  /** Logged persona turns of a pack with their contexts (identification data and feedback pairs). */
  loggedAuthored(pack: string): LoggedAuthoredTurn[] {
    const optedOut = this.optedOutPeople();
    const out: LoggedAuthoredTurn[] = [];
    for (const t of this.loggedPersonaTurns(pack)) {
      const turns = this.window(t.channelKey, t.row, CONTEXT_TURNS + 1);
      const people = peopleOf(turns);
      if (people === undefined || people.some((p) => optedOut.has(p))) continue;
      const self = turns.pop()!;
      out.push({ pack, personaId: t.personaId, context: turns.map(toContextTurn), text: self.text, source: 'logged', platformId: t.platformId, channelKey: t.channelKey, strategy: t.strategy, people });
    }
    return out;
  }

  /**
   * Pairs from feedback on a pack's persona turns: per persona, turns rated higher against turns
   * rated lower by at least `minMargin` on the 1-5 scale (👍 counts as 5, 👎 as 1; a turn's score is
   * the mean of its feedback). Feedback from opted-out people is ignored.
   */
  feedbackPairs(pack: string, minMargin: number, maxPerTurn = 8): PreferencePair[] {
    const optedOut = this.optedOutPeople();
    const feedback = this.db
      .prepare('SELECT channel_key AS channelKey, message_id AS messageId, user_id AS userId, kind, value FROM feedback WHERE message_id IS NOT NULL')
      .all() as { channelKey: string; messageId: string; userId: string; kind: 'reaction' | 'rating'; value: number }[];
    const byMessage = new Map<string, { sum: number; n: number; rating: boolean }>();
    for (const f of feedback) {
      const platform = f.channelKey.slice(0, f.channelKey.indexOf(':'));
      if (optedOut.has(`${platform}:${f.userId}`)) continue;
      const score = f.kind === 'reaction' ? (f.value > 0 ? 5 : 1) : f.value;
      const key = `${f.channelKey}\u241f${f.messageId}`;
      const agg = byMessage.get(key) ?? { sum: 0, n: 0, rating: false };
      agg.sum += score;
      agg.n++;
      agg.rating ||= f.kind === 'rating';
      byMessage.set(key, agg);
    }
    const turns = this.loggedAuthored(pack).flatMap((t) => {
      const agg = byMessage.get(`${t.channelKey}\u241f${t.platformId}`);
      return agg ? [{ ...t, score: agg.sum / agg.n, rating: agg.rating }] : [];
    });
    const pairs: PreferencePair[] = [];
    for (const a of turns) {
      let made = 0;
      for (const b of turns) {
        if (made >= maxPerTurn) break;
        if (a.personaId !== b.personaId || a.score - b.score < minMargin) continue;
        made++;
        pairs.push({
          pack,
          personaId: a.personaId,
          context: a.context,
          chosen: a.text,
          rejected: b.text,
          rejectedContext: b.context,
          chosenScore: a.score,
          rejectedScore: b.score,
          source: a.rating || b.rating ? 'rating' : 'feedback',
          channelKey: a.channelKey,
          people: [...new Set([...a.people, ...b.people])],
        });
      }
    }
    return pairs;
  }

  // --- health ---------------------------------------------------------------------------------------

  recordFidelity(r: FidelityRow): void {
    this.db
      .prepare('INSERT INTO fidelity_scores (channel_key, message_id, pack, persona_id, fidelity, author_prob, identified, model_version, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.channelKey, r.messageId, r.pack, r.personaId, r.fidelity, r.authorProb, r.identified, r.modelVersion, r.at);
  }

  /** The newest `limit` scored turns of a channel, oldest first. */
  recentFidelity(channelKey: string, limit: number): FidelityRow[] {
    const rows = this.db
      .prepare(
        `SELECT channel_key AS channelKey, message_id AS messageId, pack, persona_id AS personaId, fidelity, author_prob AS authorProb, identified, model_version AS modelVersion, at
         FROM fidelity_scores WHERE channel_key = ? ORDER BY id DESC LIMIT ?`,
      )
      .all(channelKey, limit) as FidelityRow[];
    return rows.reverse();
  }

  recordAlert(a: AlertRow): void {
    this.db
      .prepare('INSERT INTO health_alerts (channel_key, kind, persona_id, value, threshold, state, at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(a.channelKey, a.kind, a.personaId ?? null, a.value, a.threshold, a.state, a.at);
  }

  /** The latest alert state of one kind (and persona) in a channel. */
  lastAlert(channelKey: string, kind: AlertRow['kind'], personaId?: string): AlertRow | undefined {
    const row = this.db
      .prepare(
        `SELECT channel_key AS channelKey, kind, persona_id AS personaId, value, threshold, state, at FROM health_alerts
         WHERE channel_key = ? AND kind = ? AND persona_id IS ? ORDER BY id DESC LIMIT 1`,
      )
      .get(channelKey, kind, personaId ?? null) as (Omit<AlertRow, 'personaId'> & { personaId: string | null }) | undefined;
    if (!row) return undefined;
    const { personaId: p, ...rest } = row;
    return p ? { ...rest, personaId: p } : rest;
  }

  /** Forget-me for derived rows: delete judged candidates and pairs that hold this person's words. */
  forgetPerson(person: string): { candidates: number; pairs: number } {
    const like = `%${JSON.stringify(person)}%`;
    return this.db.transaction(() => ({
      candidates: this.db.prepare('DELETE FROM judged_candidates WHERE people LIKE ?').run(like).changes,
      pairs: this.db.prepare('DELETE FROM preference_pairs WHERE people LIKE ?').run(like).changes,
    }))();
  }
}

/** Whether a context from a logged channel holds a message of one of that channel's crisis windows. */
function touchesCrisis(crisis: Map<string, Set<string>>, channelKey: string | null | undefined, context: readonly ContextTurn[]): boolean {
  const texts = channelKey ? crisis.get(channelKey) : undefined;
  return texts !== undefined && context.some((t) => texts.has(t.text));
}

/** Everyone whose words are in a window; undefined when a turn's person was forgotten (leave it out). */
export function peopleOf(turns: readonly LoggedTurn[]): string[] | undefined {
  const people = new Set<string>();
  for (const t of turns) {
    if (t.person === null) return undefined;
    if (!t.isBot || t.person) people.add(t.person);
  }
  return [...people];
}

export function toContextTurn(t: LoggedTurn): ContextTurn {
  return { name: t.name, text: t.text, isBot: t.isBot, ...(t.personaId ? { personaId: t.personaId } : {}) };
}
