// Training data never holds the conversation around a crisis the safety gate recorded
// (training_exclusion_windows, migrations/006): not in TRL exports of any format, not in the reward
// model's stored pairs and judged turns, not in the director's logged decisions, including the
// round the crisis message answered. Removing the crisis record brings the rows back, so each check
// below can fail.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { actionSpace } from '../src/director/actions.ts';
import { exportPack, toJsonl, type ExportFormat } from '../src/export/trl.ts';
import { loadLoggedDecisions } from '../src/learn/logged.ts';
import type { ContextTurn } from '../src/reward/rubric.ts';
import { FidelityStore, toContextTurn } from '../src/reward/store.ts';
import { OfflineGenerator } from '../src/speaker/offline.ts';
import { humanEvent, makeEngine, RecordingOutlet, tempDir } from './support/core.ts';
import { makeGatedEngine } from './support/safety.ts';

const CRISIS = 'I have the pills ready and I want to die tonight';
const AFTER = 'sorry, my sister is coming over now and we will talk';

async function conversations() {
  const built = makeGatedEngine(new OfflineGenerator({ seed: 7 }), {
    engine: { alwaysOnPlatforms: ['discord'] },
    dbFile: path.join(tempDir('mascot-export-crisis-'), 'mascot.db'),
    gate: { quietMinutes: 0 }, // the companions speak again right away: rounds run inside the window
  });
  let n = 0;
  const say = async (channelId: string, author: { id: string; name: string }, text: string) => {
    await built.engine.receive(humanEvent(text, { platform: 'discord', channelId, spaceId: 'g', author: { ...author, isBot: false }, messageId: `msg-${++n}` }), new RecordingOutlet());
    await new Promise((r) => setTimeout(r, 3)); // distinct timestamps between messages
  };
  const erin = { id: 'erin', name: 'Erin' };
  const sam = { id: 'sam', name: 'Sam' };
  await say('calm', erin, 'work is overwhelming and I keep putting off my thesis chapter');
  await say('crisis-room', sam, 'I feel so alone since the move to Leeds');
  await say('crisis-room', sam, CRISIS);
  await say('crisis-room', sam, AFTER);
  await say('calm', erin, 'maybe I could start with the outline of the thesis tomorrow');
  return built;
}

/** Stores pairs and judged turns as `mascot judge` would from these logged contexts. */
function storeDerivedRows(db: ReturnType<typeof makeEngine>['db']) {
  const fidelity = new FidelityStore(db);
  const lastRow = (channel: string, like: string) => db.prepare('SELECT id FROM messages WHERE channel_key = ? AND text LIKE ? ORDER BY id DESC LIMIT 1').pluck().get(channel, like) as number;
  const context = (channel: string, row: number): ContextTurn[] => fidelity.window(channel, row).map(toContextTurn);
  const inWindow = context('discord:crisis-room', lastRow('discord:crisis-room', 'sorry%'));
  const calm = context('discord:calm', lastRow('discord:calm', 'maybe%'));
  // The quote: a context of the calm channel that repeats the crisis message word for word.
  const quoting = [...calm, { name: 'Pat', text: CRISIS, isBot: false }];
  const pair = (channelKey: string, ctx: ContextTurn[], chosen: string, people: string[]) => ({
    pack: 'support',
    personaId: 'anchor',
    context: ctx,
    chosen,
    rejected: 'Here is a list of ten productivity apps.',
    chosenScore: 4.5,
    rejectedScore: 2,
    source: 'judge' as const,
    judge: 'test-judge',
    channelKey,
    people,
  });
  fidelity.savePairs([
    pair('discord:crisis-room', inWindow, 'That is a lot to carry tonight.', ['discord:sam']),
    pair('discord:calm', quoting, 'That sounds frightening to read.', ['discord:erin']),
    pair('discord:calm', calm, 'Starting with the outline sounds doable.', ['discord:erin']),
  ]);
  const judged = db.prepare(
    `INSERT INTO judged_candidates (run_id, pack, persona_id, author_id, strategy, context_key, context_json, text, generator, judge, scores_json, mean_score, channel_key, people, at)
     VALUES ('run', 'support', 'anchor', 'anchor', NULL, ?, ?, ?, 'test-model', 'test-judge', '{}', 4, ?, ?, 0)`,
  );
  judged.run('k1', JSON.stringify(inWindow), 'I am here with you right now.', 'discord:crisis-room', '["discord:sam"]');
  judged.run('k2', JSON.stringify(calm), 'An outline is a kind first step.', 'discord:calm', '["discord:erin"]');
}

describe('training data around a crisis', () => {
  it('is left out of every export format, stored pairs, judged turns and logged decisions', async () => {
    const { db, engine } = await conversations();
    const pack = engine.packs.get('support')!;
    storeDerivedRows(db);
    const fidelity = new FidelityStore(db);
    const formats: ExportFormat[] = ['trl-grpo', 'trl-dpo', 'jsonl'];
    const exported = () => Object.fromEntries(formats.map((f) => [f, exportPack(db, pack, { format: f })])) as Record<ExportFormat, ReturnType<typeof exportPack>>;
    const crisisRoom = () => loadLoggedDecisions(db, pack, actionSpace(pack)).decisions.filter((d) => d.channelKey === 'discord:crisis-room');

    expect(db.prepare("SELECT COUNT(*) FROM safety_events WHERE channel_key = 'discord:crisis-room'").pluck().get()).toBe(1);
    const marked = exported();
    for (const f of formats) {
      const text = toJsonl(marked[f].records);
      expect(text, f).not.toContain('pills ready');
      expect(text, f).not.toContain('sister is coming');
      expect(text, f).not.toContain('That is a lot to carry tonight');
      // The rest of the data is there.
      expect(text, f).toContain(f === 'trl-dpo' ? 'Starting with the outline sounds doable' : 'thesis');
    }
    // The quote in another channel's context is caught by the export's own check.
    expect(marked['trl-dpo'].skipped['holds words from around a crisis']).toBe(1);
    expect(marked.jsonl.skipped['holds words from around a crisis']).toBe(1);
    // The reward model's training data.
    expect(fidelity.pairs('support').map((p) => p.chosen).sort()).toEqual(['Starting with the outline sounds doable.', 'That sounds frightening to read.']);
    expect(fidelity.judgedAuthored('support').map((t) => t.text)).toEqual(['An outline is a kind first step.']);
    // Persona turns from before the crisis stay (their context ends before it); none from the window.
    const authored = fidelity.loggedAuthored('support').filter((t) => t.channelKey === 'discord:crisis-room');
    expect(authored.length).toBeGreaterThan(0);
    expect(authored.every((t) => t.context.every((c) => c.text !== CRISIS && c.text !== AFTER))).toBe(true);
    // The director's: no decision of the crisis room, neither inside the window nor the round the crisis answered.
    expect(crisisRoom()).toEqual([]);
    expect(loadLoggedDecisions(db, pack, actionSpace(pack)).decisions.some((d) => d.channelKey === 'discord:calm')).toBe(true);

    // Without the crisis record the same rows would be training data.
    db.prepare('DELETE FROM safety_events').run();
    const unmarked = exported();
    expect(toJsonl(unmarked.jsonl.records)).toContain('sister is coming');
    expect(toJsonl(unmarked.jsonl.records)).toContain('pills ready');
    expect(toJsonl(unmarked['trl-grpo'].records)).toContain('sister is coming');
    expect(unmarked.jsonl.skipped['holds words from around a crisis']).toBeUndefined();
    expect(fidelity.pairs('support')).toHaveLength(3);
    expect(fidelity.judgedAuthored('support')).toHaveLength(2);
    expect(fidelity.loggedAuthored('support').filter((t) => t.channelKey === 'discord:crisis-room').length).toBeGreaterThan(authored.length);
    const rounds = new Set(crisisRoom().map((d) => d.roundId));
    expect(rounds.size).toBeGreaterThanOrEqual(2); // the round before the crisis and one after it
  });
});
