// `npm run bench` section "mascot-commands": how long a /mascot verb takes from validated
// arguments to its answer over a real SQLite file (Discord wants an answer within 3 s), and how
// fast the Discord adapter splits a long turn.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchSection } from '../bench/section.ts';
import { timeEach } from '../bench/measure.ts';
import { builtinPolicies } from '../director/registry.ts';
import { silentLogger } from '../log.ts';
import { loadPacks } from '../persona/loader.ts';
import { splitMessage } from '../platform/discord/split.ts';
import { Engine } from '../session/engine.ts';
import { OfflineGenerator } from '../speaker/offline.ts';
import { Speaker } from '../speaker/speaker.ts';
import { openDatabase } from '../store/db.ts';
import { Store } from '../store/store.ts';
import { runMascotCommand, type MascotContext } from './mascot.ts';

export const mascotBench: BenchSection = {
  name: 'mascot-commands',
  async run({ quick }) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-bench-'));
    const db = openDatabase(path.join(dir, 'bench.db'));
    const store = new Store(db);
    const engine = new Engine({ packs: loadPacks(), defaultPack: 'support', store, speaker: new Speaker(new OfflineGenerator({ seed: 1 })), policies: builtinPolicies(), log: silentLogger() });
    const ctx: MascotContext = { engine, platform: 'discord', channelId: 'c1', spaceId: 'g1', user: { id: 'm1', name: 'Morgan', isModerator: true } };
    const n = quick ? 200 : 5000;
    const set = await timeEach(n, (i) => runMascotCommand(ctx, 'persona set', { persona: 'anchor', field: 'talkativeness', value: String((i % 100) / 100) }));
    const list = await timeEach(n, () => runMascotCommand(ctx, 'personas'));
    const history = await timeEach(quick ? 50 : 500, () => runMascotCommand(ctx, 'persona history', { persona: 'anchor' }));
    const long = 'One more careful thought about the next small step. '.repeat(150);
    const split = await timeEach(quick ? 200 : 5000, () => splitMessage(long));
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
    const fmt = (t: { medianUs: number; p99Us: number }) => `${t.medianUs.toFixed(0)} us median, ${t.p99Us.toFixed(0)} us p99`;
    return [
      { metric: 'persona set (validate, audit row, write)', value: fmt(set) },
      { metric: 'personas (status of every persona, with overrides)', value: fmt(list) },
      { metric: `persona history (${n + 200} audit rows, last 15 shown)`, value: fmt(history) },
      { metric: `split a ${long.length}-character turn for Discord`, value: fmt(split) },
    ];
  },
};
