// People control their data: retention purges old conversation data, forget-me removes what was
// derived from a person's words, opted-out people are never logged (not even inside decision
// states), and training exports leave out crisis conversations and redact personal details.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { actionSpace } from '../src/director/actions.ts';
import { exportPack } from '../src/export/trl.ts';
import { loadLoggedDecisions } from '../src/learn/logged.ts';
import { silentLogger } from '../src/log.ts';
import { forgetDerived, purgeOlderThan, setUpRetention } from '../src/privacy/retention.ts';
import { createRuntime } from '../src/runtime.ts';
import { SafetyStore } from '../src/safety/store.ts';
import type { Db } from '../src/store/db.ts';
import { OfflineGenerator } from '../src/speaker/offline.ts';
import { humanEvent, makeEngine, RecordingOutlet, tempDir } from './support/core.ts';
import { makeGatedEngine } from './support/safety.ts';

const DAY = 86_400_000;

/** Every text value stored anywhere in the database, as one string. */
function everything(db: Db): string {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  return tables.map((t) => JSON.stringify(db.prepare(`SELECT * FROM "${t}"`).all())).join('\n');
}

function addPair(db: Db, people: string[], at: number, text: string) {
  db.prepare(
    `INSERT INTO preference_pairs (pack, persona_id, context_key, context_json, chosen, rejected, source, people, at) VALUES ('support', 'anchor', ?, '[]', ?, 'meh', 'judge', ?, ?)`,
  ).run(`ctx-${Math.random()}`, text, JSON.stringify(people), at);
}

async function conversation(options: { gate?: boolean } = {}) {
  const generator = new OfflineGenerator({ seed: 5 });
  const engine = { alwaysOnPlatforms: ['console', 'discord'] };
  const built = options.gate ? makeGatedEngine(generator, { engine, gate: { quietMinutes: 0 } }) : makeEngine(generator, engine);
  let n = 0;
  const say = (author: { id: string; name: string }, text: string, channelId = 'room', at = Date.now()) =>
    built.engine.receive(humanEvent(text, { platform: 'discord', channelId, spaceId: 'g', author: { ...author, isBot: false }, messageId: `msg-${++n}`, at }), new RecordingOutlet());
  return { ...built, say };
}

describe('retention', () => {
  it('purges messages, decisions, feedback, crisis events and training rows older than the limit, and nothing newer', async () => {
    const { db, store, say } = await conversation();
    const alice = { id: 'alice', name: 'Alice' };
    await say(alice, 'I feel lonely since I moved here', 'room', Date.now());
    store.addFeedback({ channelKey: 'discord:room', userId: 'alice', kind: 'rating', value: 4, at: Date.now() });
    addPair(db, ['discord:alice'], Date.now(), 'old pair');
    new SafetyStore(db).recordEvent({ channelKey: 'discord:room', platform: 'discord', channelId: 'room', messageId: 'x', category: 'suicide', source: 'rules', patterns: [], responded: true, alerted: true, quietUntil: 0, at: Date.now() });
    const recent = Date.now() + 10 * DAY;
    store.logMessage({ channelKey: 'discord:room', platformId: 'recent', authorId: 'alice', authorName: 'Alice', isBot: false, text: 'a recent message', at: recent });
    addPair(db, ['discord:alice'], recent, 'recent pair');

    const removed = purgeOlderThan(db, Date.now() + DAY);
    expect(removed.messages).toBeGreaterThanOrEqual(2); // the human message and the bot turns
    expect(removed.decisions).toBeGreaterThanOrEqual(1);
    expect(removed).toMatchObject({ feedback: 1, safety_events: 1, preference_pairs: 1 });
    expect(db.prepare('SELECT platform_id FROM messages').pluck().all()).toEqual(['recent']);
    expect(db.prepare('SELECT chosen FROM preference_pairs').pluck().all()).toEqual(['recent pair']);
  });

  it('runs at start-up when MASCOT_RETENTION_DAYS is set, and not otherwise', () => {
    const file = path.join(tempDir(), 'retention.db');
    const seed = (db: Db) =>
      db.prepare("INSERT INTO messages (channel_key, platform_id, author_id, author_name, is_bot, text, at) VALUES ('console:a', ?, 'u', 'U', 0, 'old words', ?)").run(`old-${Math.random()}`, Date.now() - 90 * DAY);
    const keep = createRuntime(loadConfig({ MASCOT_DB: file, MASCOT_LOG_LEVEL: 'silent' }), silentLogger());
    seed(keep.db);
    keep.close();
    const again = createRuntime(loadConfig({ MASCOT_DB: file, MASCOT_LOG_LEVEL: 'silent' }), silentLogger());
    expect(again.db.prepare('SELECT COUNT(*) FROM messages').pluck().get()).toBe(1);
    again.close();
    const purging = createRuntime(loadConfig({ MASCOT_DB: file, MASCOT_LOG_LEVEL: 'silent', MASCOT_RETENTION_DAYS: '30' }), silentLogger());
    expect(purging.db.prepare('SELECT COUNT(*) FROM messages').pluck().get()).toBe(0);
    purging.close();
    expect(() => loadConfig({ MASCOT_RETENTION_DAYS: '0' })).toThrow(/MASCOT_RETENTION_DAYS/);
  });

  it('a failing purge is logged, not thrown', () => {
    const { db } = makeEngine(new OfflineGenerator({ seed: 1 }));
    db.exec('DROP TABLE feedback');
    const retention = setUpRetention(loadConfig({ MASCOT_RETENTION_DAYS: '1' }), silentLogger(), db);
    expect(retention.purge()).toEqual({});
    retention.stop();
  });
});

describe('forget-me', () => {
  it("removes a person's messages, feedback, training rows and crisis events, and their words from decision states", async () => {
    const { db, store, say } = await conversation({ gate: true });
    const alice = { id: 'alice', name: 'Alice' };
    const bob = { id: 'bob', name: 'Bob' };
    const secret = 'my landlord keeps my deposit and I cannot sleep';
    await say(alice, secret);
    await say(bob, 'that sounds so stressful, I had the same last year');
    await say(alice, 'I want to kill myself'); // a crisis event of alice's
    store.addFeedback({ channelKey: 'discord:room', userId: 'alice', kind: 'reaction', value: 1, at: Date.now() });
    addPair(db, ['discord:alice', 'discord:bob'], Date.now(), 'pair with alice');
    addPair(db, ['discord:bob'], Date.now(), 'pair of bob only');
    expect(everything(db)).toContain(secret);

    expect(store.forgetUser('discord', 'alice')).toEqual({ messages: 2, feedback: 1 });
    const all = everything(db);
    expect(all).not.toContain(secret);
    expect(all).not.toContain('kill myself');
    expect(db.prepare('SELECT chosen FROM preference_pairs').pluck().all()).toEqual(['pair of bob only']);
    expect(db.prepare('SELECT COUNT(*) FROM safety_events').pluck().get()).toBe(0);
    expect(db.prepare("SELECT COUNT(*) FROM messages WHERE author_id = 'bob'").pluck().get()).toBe(1);
    // Nothing else of alice's is left to forget.
    expect(forgetDerived(db, 'discord', 'alice')).toEqual({});
  });
});

describe('opted-out people', () => {
  it('are never logged, not even inside the decision states of other people\'s rounds', async () => {
    const { db, store, say } = await conversation();
    store.setOptOut('discord', 'carol', true);
    const carolWords = 'my brother has been in hospital for a week and I am scared';
    await say({ id: 'carol', name: 'Carol' }, carolWords);
    await say({ id: 'dave', name: 'Dave' }, 'I hope your brother gets better soon, I know that fear');
    const all = everything(db);
    expect(all).not.toContain(carolWords);
    expect(all).not.toContain('Carol');
    const states = db.prepare('SELECT state_json FROM decisions').pluck().all() as string[];
    expect(states.length).toBeGreaterThan(0);
    expect(states.some((s) => s.includes('[opted out]'))).toBe(true);
  });
});

describe('training data', () => {
  it('leaves out the conversation around a crisis and redacts personal details', async () => {
    const { db, engine, say } = await conversation({ gate: true });
    const erin = { id: 'erin', name: 'Erin' };
    await say(erin, 'work is overwhelming, mail me at erin.k@example.com or call +44 20 7946 0958, see https://example.org/x', 'calm');
    await say(erin, 'I feel so alone lately', 'crisis-room');
    await say(erin, 'I have the pills ready, I want to die tonight', 'crisis-room');
    await say(erin, 'sorry, I am talking to my sister now', 'crisis-room');
    const pack = engine.packs.get('support')!;
    const records = exportPack(db, pack, { format: 'jsonl' }).records.map((r) => JSON.stringify(r.record));
    expect(records.length).toBeGreaterThan(0);
    expect(records.join('\n')).not.toContain('pills ready');
    expect(records.join('\n')).not.toContain('erin.k@example.com');
    expect(records.join('\n')).not.toContain('7946');
    expect(records.join('\n')).not.toContain('example.org');
    // The director's training data leaves out the crisis room's decisions from the crisis on, keeps the rest.
    const logged = loadLoggedDecisions(db, pack, actionSpace(pack));
    const crisisAt = db.prepare("SELECT at FROM safety_events WHERE channel_key = 'discord:crisis-room'").pluck().get() as number;
    const after = db.prepare("SELECT COUNT(*) FROM decisions WHERE channel_key = 'discord:crisis-room' AND at >= ?").pluck().get(crisisAt) as number;
    expect(after).toBeGreaterThan(0); // the quiet period was 0 minutes: rounds ran again
    // The round before it is left out too: the crisis message was the person's answer to it (its reward would read it).
    const answered = db.prepare("SELECT COUNT(*) FROM decisions WHERE channel_key = 'discord:crisis-room' AND at < ?").pluck().get(crisisAt) as number;
    expect(answered).toBeGreaterThan(0);
    expect(logged.decisions.length + answered + after + logged.skipped).toBe(db.prepare('SELECT COUNT(*) FROM decisions').pluck().get());
    expect(logged.decisions.some((d) => d.channelKey === 'discord:calm')).toBe(true);
    expect(logged.decisions.every((d) => d.channelKey !== 'discord:crisis-room' || d.at < crisisAt)).toBe(true);
  });
});
