// Core figures: the heuristic director's decision latency, and end-to-end throughput of
// human message -> decisions -> offline turns -> SQLite log across many channels.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Turn } from '../core/types.ts';
import { HeuristicPolicy } from '../director/heuristic.ts';
import type { DirectorState } from '../director/policy.ts';
import { builtinPolicies } from '../director/registry.ts';
import { silentLogger } from '../log.ts';
import { loadPacks } from '../persona/loader.ts';
import type { Outlet } from '../platform/platform.ts';
import { Engine } from '../session/engine.ts';
import { OfflineGenerator } from '../speaker/offline.ts';
import { Speaker } from '../speaker/speaker.ts';
import { openDatabase } from '../store/db.ts';
import { Store } from '../store/store.ts';
import { createRng } from '../util/rng.ts';
import { peakRssMiB, timeEach } from './measure.ts';
import type { BenchSection } from './section.ts';

const MESSAGES = [
  'I moved abroad and feel so alone since my husband travels for work',
  'My manager criticised my report in front of everyone and I cannot stop thinking about it',
  'What should I do about my landlord ignoring the broken heating?',
  'thanks, that actually helps a bit',
  'I failed my driving test for the third time and I feel stupid',
  'We need to decide whether to ship the beta on Friday or wait a week',
];

export const coreBench: BenchSection = {
  name: 'core',
  async run({ quick }) {
    const packs = loadPacks();
    const pack = packs.get('support')!;
    const policy = new HeuristicPolicy();
    const rng = createRng(1);
    const states: DirectorState[] = MESSAGES.map((text, i) => {
      const human: Turn = { messageId: `h${i}`, author: { id: 'u', name: 'Sam', isBot: false }, text, at: 0 };
      return { pack, personas: pack.personas, transcript: [human], human, roundTurns: [], sessionStrategies: ['reflection', 'question'], humanTurnCount: 2, mentions: [], maxBotTurns: 2, floor: 0.005 };
    });
    const decide = await timeEach(quick ? 500 : 20_000, (i) => policy.decide(states[i % states.length]!, rng));

    // Throughput across many channels, each running its rounds concurrently, offline voice, real SQLite file.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-bench-'));
    const db = openDatabase(path.join(dir, 'bench.db'));
    const store = new Store(db);
    const engine = new Engine({ packs, defaultPack: 'support', store, speaker: new Speaker(new OfflineGenerator({ seed: 1 })), policies: builtinPolicies(), log: silentLogger(), pacingMs: 0 });
    let posted = 0;
    const outlet: Outlet = { post: async () => ({ messageId: `b${++posted}` }) };
    const channels = quick ? 10 : 200;
    const perChannel = quick ? 3 : 10;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: channels }, async (_, c) => {
        for (let m = 0; m < perChannel; m++) {
          await engine.receive({ platform: 'console', channelId: `c${c}`, messageId: `c${c}-m${m}`, author: { id: `u${c}`, name: 'Sam', isBot: false }, text: MESSAGES[(c + m) % MESSAGES.length]!, mentions: [], at: Date.now() }, outlet);
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const decisions = db.prepare('SELECT COUNT(*) FROM decisions').pluck().get() as number;
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
    const messages = channels * perChannel;
    return [
      { metric: 'heuristic decision latency (median)', value: `${decide.medianUs.toFixed(1)} us` },
      { metric: 'heuristic decision latency (p99)', value: `${decide.p99Us.toFixed(1)} us` },
      { metric: `throughput, ${channels} channels x ${perChannel} messages`, value: `${(messages / seconds).toFixed(0)} human messages/s, ${(decisions / seconds).toFixed(0)} decisions/s, ${(posted / seconds).toFixed(0)} offline turns/s (all logged)` },
      { metric: 'peak memory (RSS, whole process so far)', value: `${peakRssMiB().toFixed(0)} MiB` },
    ];
  },
};
