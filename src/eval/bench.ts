// The simulation section of `npm run bench`: simulated rounds per second (director decisions,
// offline-voice turns, the simulated person's reply), also with best-of-4 speakers ranked by the
// persona reward model, director-training rollouts per second, and the cost of scoring a block
// with the group reward.
import type { BenchSection } from '../bench/section.ts';
import { timeEach } from '../bench/measure.ts';
import { builtinPolicies } from '../director/registry.ts';
import { loadPacks } from '../persona/loader.ts';
import { RewardModels, shippedRewardModels } from '../reward/best-of-n.ts';
import { allowedActions, rollout, startStates } from '../sim/environment.ts';
import { runConversation } from '../sim/run.ts';
import { loadProfiles, loadSuite } from '../sim/scenario.ts';
import { groupReward } from './group-reward.ts';

export const simBench: BenchSection = {
  name: 'simulation',
  async run({ quick }) {
    const packs = loadPacks();
    const profiles = loadProfiles();
    const heuristic = builtinPolicies().get('heuristic')!;
    const rows: { metric: string; value: string }[] = [];

    const models = new RewardModels(shippedRewardModels());
    const runs = [
      ...['support', 'meeting'].map((name) => ({ name, label: 'heuristic, offline voice', speakerOptions: undefined })),
      ...(models.packs.includes('support') ? [{ name: 'support', label: 'heuristic, offline voice, best-of-4 ranked by the reward model', speakerOptions: { candidates: 4, ranker: models.ranker() } }] : []),
    ];
    for (const { name, label, speakerOptions } of runs) {
      const suite = loadSuite(name);
      const pack = packs.get(suite.pack)!;
      const scenarios = suite.scenarios.slice(0, quick ? 3 : 24);
      // Warm-up pass (JIT), then the timed pass.
      for (const timed of [false, true]) {
        let rounds = 0;
        const t0 = process.hrtime.bigint();
        for (const scenario of scenarios) rounds += (await runConversation({ pack, scenario, seed: timed ? 2 : 1, policy: heuristic, profiles, speakerOptions })).engagements.length;
        const s = Number(process.hrtime.bigint() - t0) / 1e9;
        if (timed) rows.push({ metric: `simulated rounds per second (${name}, ${label})`, value: `${(rounds / s).toFixed(0)} (${rounds} rounds in ${s.toFixed(2)} s)` });
      }
    }
    if (models.packs.includes('support')) {
      // One best-of-4 ranking as serving runs it: four candidates of a simulated turn, eight turns of context.
      const pack = packs.get('support')!;
      const c = await runConversation({ pack, scenario: loadSuite('support').scenarios[0]!, seed: 1, policy: heuristic, profiles, maxRounds: 4 });
      const i = c.history.map((t) => t.author.isBot).lastIndexOf(true);
      const persona = pack.personas.find((p) => p.id === c.history[i]!.author.personaId)!;
      const candidates = c.history.filter((t) => t.author.isBot).slice(-4).map((t) => t.text);
      const ranker = models.ranker();
      const r = await timeEach(quick ? 20 : 500, () => ranker(persona, c.history.slice(0, i), candidates));
      rows.push({ metric: 'best-of-4 ranking with the support reward model (4 candidates)', value: `median ${r.medianUs.toFixed(0)} us, p99 ${r.p99Us.toFixed(0)} us` });
    }
    await models.close();

    const pack = packs.get('support')!;
    const starts = await startStates(pack, loadSuite('support').scenarios.slice(0, quick ? 1 : 4), [1], { every: 3, profiles });
    const jobs = starts.flatMap((start) => allowedActions(start).map((action) => ({ start, action })));
    const n = Math.min(jobs.length, quick ? 20 : 200);
    const r = await timeEach(n, (i) => rollout(jobs[i % jobs.length]!.start, jobs[i % jobs.length]!.action, { policy: heuristic, seed: i }), Math.min(20, n));
    rows.push({ metric: 'rollouts per second (blockTurns 3)', value: `${(1e6 / r.medianUs).toFixed(0)} (median ${(r.medianUs / 1000).toFixed(2)} ms, p99 ${(r.p99Us / 1000).toFixed(2)} ms)` });

    const block = (await rollout(starts[0]!, allowedActions(starts[0]!)[0]!, { policy: heuristic, seed: 1, blockTurns: 6 })).turns;
    const context = starts[0]!.point.history;
    const g = await timeEach(quick ? 50 : 2000, () => groupReward({ pack, context, turns: block, engagement: 0.5 }));
    rows.push({ metric: `group reward of a ${block.length}-turn block`, value: `median ${g.medianUs.toFixed(0)} us, p99 ${g.p99Us.toFixed(0)} us` });
    return rows;
  },
};
