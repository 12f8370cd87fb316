import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { exportPack, toJsonl } from '../src/export/trl.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { OfflineRubricJudge } from '../src/reward/offline-rubric.ts';
import { judgeContexts } from '../src/reward/preferences.ts';
import { FidelityStore } from '../src/reward/store.ts';
import { OfflineGenerator } from '../src/speaker/offline.ts';
import { Speaker } from '../src/speaker/speaker.ts';
import { humanEvent, makeEngine, RecordingOutlet, tempDir } from './support/core.ts';

const BOB_SECRET = 'I failed my driving test twice and nobody at home knows';

/** Two people talk with the support pack in two channels; returns the database file and handles. */
async function loggedConversations() {
  const dir = tempDir('mascot-export-');
  const file = path.join(dir, 'mascot.db');
  const { engine, store, db } = makeEngine(new OfflineGenerator({ seed: 3 }), {}, file);
  const alice = { id: 'u1', name: 'Alice', isBot: false };
  const bob = { id: 'u2', name: 'Bob', isBot: false };
  const outlets = new Map<string, RecordingOutlet>();
  const say = async (channelId: string, author: typeof alice, text: string) => {
    const outlet = outlets.get(channelId) ?? new RecordingOutlet();
    outlets.set(channelId, outlet);
    await engine.receive(humanEvent(text, { channelId, author, messageId: `${channelId}-${Math.random().toString(36).slice(2)}` }), outlet);
  };
  await say('room', alice, 'I moved abroad and feel so alone. Write to me at alice.w@example.com or call +1 555 123 4567.');
  await say('room', bob, BOB_SECRET);
  await say('room', alice, 'Bob, that sounds hard. I keep crying at night since my husband travels for work.');
  await say('quiet', alice, 'My sister did not call on my birthday and I pretend it is fine.');
  await say('bobs-room', bob, 'My manager ignored my proposal again in front of everyone today.');
  return { dir, file, engine, store, db };
}

describe('training exports', () => {
  it('never contain an opted-out person\'s text, in any format, and redact personal details', async () => {
    const { file, engine, store, db } = await loggedConversations();
    const pack = engine.packs.get('support')!;
    const fidelity = new FidelityStore(db);
    // Judged preference pairs on the logged contexts (some hold Bob's words), and feedback.
    const contexts = fidelity.loggedContexts('support', 50);
    expect(contexts.some((c) => c.people.includes('console:u2'))).toBe(true);
    const run = await judgeContexts({ pack, contexts, speaker: new Speaker(new OfflineGenerator({ seed: 4 })), judge: new OfflineRubricJudge(), k: 2, runId: 'test' });
    for (const set of run.sets) fidelity.saveJudgedSet(set, 'test');
    const botTurns = db.prepare("SELECT channel_key AS c, platform_id AS p FROM messages WHERE is_bot = 1 ORDER BY id").all() as { c: string; p: string }[];
    botTurns.forEach((t, i) => store.addFeedback({ channelKey: t.c, messageId: t.p, userId: i % 2 ? 'u1' : 'u2', kind: 'reaction', value: i % 3 ? 1 : -1, at: Date.now() }));

    const all = (format: 'trl-grpo' | 'trl-dpo' | 'jsonl') => toJsonl(exportPack(db, pack, { format, withExamples: true }).records);

    // Before the opt-out Bob's words are there: the check below can fail.
    expect(all('jsonl')).toContain('driving test');
    expect(all('trl-grpo')).toContain('driving test');

    store.setOptOut('console', 'u2', true);
    for (const format of ['trl-grpo', 'trl-dpo', 'jsonl'] as const) {
      const out = all(format);
      expect(out.length, format).toBeGreaterThan(0);
      expect(out, format).not.toContain('driving test');
      expect(out, format).not.toContain('proposal again');
      expect(out, format).not.toContain('Bob');
      // Alice is still there, under a pseudonym, with her details redacted.
      expect(out, format).not.toContain('alice.w@example.com');
      expect(out, format).not.toContain('555 123 4567');
      expect(out, format).not.toContain('Alice');
      if (format !== 'trl-dpo') expect(out, format).toContain('Person 1');
    }
    const jsonl = all('jsonl');
    expect(jsonl).toContain('[email]');
    expect(jsonl).toContain('[phone]');

    // The CLI writes the same data to a file, one persona per file when asked.
    const outDir = path.join(tempDir('mascot-export-out-'), 'by-persona');
    const stdout: string[] = [];
    const code = await main(['export', '--format', 'trl-grpo', '--pack', 'support', '--out', outDir, '--per-persona'], {
      env: { MASCOT_DB: file, MASCOT_LOG_LEVEL: 'silent' },
      stdout: { write: (s: string) => stdout.push(s) } as unknown as NodeJS.WritableStream,
      stderr: { write: (s: string) => stdout.push(s) } as unknown as NodeJS.WritableStream,
    });
    expect(code, stdout.join('')).toBe(0);
    const files = fs.readdirSync(outDir);
    expect(files.length).toBeGreaterThan(1);
    for (const f of files) expect(fs.readFileSync(path.join(outDir, f), 'utf8')).not.toContain('driving test');
    db.close();
  });

  it('writes TRL shapes: prompt-only conversations for GRPO, prompt/chosen/rejected for DPO', async () => {
    const { engine, db } = await loggedConversations();
    const pack = engine.packs.get('support')!;
    const grpo = exportPack(db, pack, { format: 'trl-grpo' }).records.map((r) => r.record);
    expect(grpo.length).toBeGreaterThan(0);
    const g = grpo[0] as { prompt: { role: string; content: string }[]; persona: string; strategy: string; directive: string };
    expect(g.prompt.map((m) => m.role)).toEqual(['system', 'user']);
    expect(pack.personas.map((p) => p.id)).toContain(g.persona);
    expect(g.prompt[0]!.content).toContain(g.directive);
    expect(g.prompt[1]!.content).toContain('Person 1:');

    const dpo = exportPack(db, pack, { format: 'trl-dpo', withExamples: true, personaId: 'anchor' }).records.map((r) => r.record);
    expect(dpo.length).toBe(4 * 12); // 4 anchor examples x 12 examples of the other three personas
    const d = dpo[0] as { prompt: { role: string }[]; chosen: { role: string; content: string }[]; rejected: { role: string; content: string }[]; source: string; persona: string };
    expect(d.chosen[0]!.role).toBe('assistant');
    expect(d.rejected[0]!.role).toBe('assistant');
    expect(d.source).toBe('examples');
    expect(d.persona).toBe('anchor');
    db.close();
  });
});
