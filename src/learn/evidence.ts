// The offline evidence that one director is better than another, from two sources:
//   logs        off-policy evaluation on logged decisions (their propensities, the reward of what
//               followed each: logged-reward.ts), paired DR difference
//   simulation  both directors play the scenario suite under the same evaluation seeds; each
//               conversation is scored with the group reward over all its turns (engagement: the
//               mean of the simulated person's engagement after each round); paired difference
// `mascot ope` shows the first; `mascot director promote` uses the logs when their effective sample
// size suffices and the simulation otherwise.
import type { Policy } from '../director/policy.ts';
import { groupReward, type FidelityScorer, type RewardWeights } from '../eval/group-reward.ts';
import type { Pack } from '../persona/schema.ts';
import { runConversation } from '../sim/run.ts';
import { loadProfiles, type Scenario } from '../sim/scenario.ts';
import type { Db } from '../store/db.ts';
import { createRng } from '../util/rng.ts';
import { DirectorFeaturizer } from './features.ts';
import { loadLoggedDecisions, type LoggedQuery } from './logged.ts';
import { loggedRewards } from './logged-reward.ts';
import { compareOffPolicy, evaluateOffPolicy, quantile, type Interval, type OpeComparison, type OpeOptions, type OpeReport, type OpeSample } from './ope.ts';

export interface LogEvidence {
  /** Decisions used, and those skipped (with the first reasons). */
  n: number;
  skipped: number;
  problems: string[];
  candidate: OpeReport;
  comparison?: OpeComparison;
}

async function distributions(policy: Policy, states: readonly Parameters<Policy['decide']>[0][]): Promise<number[][]> {
  const rng = createRng(1);
  const out: number[][] = [];
  for (const s of states) out.push((await policy.decide(s, rng)).probabilities);
  return out;
}

/** Off-policy evaluation of `candidate` (and the paired comparison with `baseline`) on a pack's logged decisions. */
export async function evidenceFromLogs(
  db: Db,
  pack: Pack,
  candidate: Policy,
  options: { baseline?: Policy; query?: LoggedQuery; ope?: OpeOptions; feedbackWeight?: number; weights?: Partial<RewardWeights>; fidelity?: FidelityScorer } = {},
): Promise<LogEvidence> {
  const featurizer = new DirectorFeaturizer(pack, 2);
  const set = loadLoggedDecisions(db, pack, featurizer.slots, options.query);
  if (set.decisions.length === 0)
    throw new Error(`no usable logged decisions of pack "${pack.id}"${set.skipped ? ` (${set.skipped} skipped: ${set.problems.join('; ')})` : ''}; run the companion with logging on, or compare in simulation`);
  const rewards = await loggedRewards(db, pack, set.decisions, { feedbackWeight: options.feedbackWeight, weights: options.weights, fidelity: options.fidelity });
  const states = set.decisions.map((d) => d.state);
  const targets = await distributions(candidate, states);
  const samples: OpeSample[] = set.decisions.map((d, i) => ({
    target: targets[i]!,
    action: d.action,
    propensity: d.propensity,
    reward: rewards[i]!,
    features: featurizer.extract(d.state).dense,
  }));
  const base = { n: samples.length, skipped: set.skipped, problems: set.problems };
  if (!options.baseline) return { ...base, candidate: evaluateOffPolicy(samples, options.ope) };
  const comparison = compareOffPolicy(samples, await distributions(options.baseline, states), options.ope);
  return { ...base, candidate: comparison.candidate, comparison };
}

export interface SimEvidence {
  conversations: number;
  seeds: number[];
  candidate: Interval;
  baseline: Interval;
  difference: Interval;
}

/** Group reward of every conversation of the suite under every seed, in a fixed order. */
export async function conversationRewards(
  pack: Pack,
  scenarios: readonly Scenario[],
  seeds: readonly number[],
  policy: Policy,
  options: { weights?: Partial<RewardWeights>; fidelity?: FidelityScorer } = {},
): Promise<number[]> {
  const profiles = loadProfiles();
  const personas = pack.personas.filter((p) => p.enabled);
  const rewards: number[] = [];
  for (const seed of seeds)
    for (const scenario of scenarios) {
      const c = await runConversation({ pack, scenario, seed, policy, profiles, personas });
      const engagement = c.engagements.length ? c.engagements.reduce((a, b) => a + b, 0) / c.engagements.length : 0;
      // Scored as `mascot eval` scores a conversation (its "Overall"): the opening is the context.
      rewards.push((await groupReward({ pack, personas, context: c.history.slice(0, 1), turns: c.history.slice(1), engagement }, options)).total);
    }
  return rewards;
}

/** Paired comparison in simulation: same scenarios, same seeds, same simulated people. */
export async function evidenceFromSimulation(
  pack: Pack,
  scenarios: readonly Scenario[],
  seeds: readonly number[],
  candidate: Policy,
  baseline: Policy,
  options: { bootstrap?: number; weights?: Partial<RewardWeights>; fidelity?: FidelityScorer } = {},
): Promise<SimEvidence> {
  const a = await conversationRewards(pack, scenarios, seeds, candidate, options);
  const b = await conversationRewards(pack, scenarios, seeds, baseline, options);
  return { conversations: a.length, seeds: [...seeds], candidate: meanInterval(a, options.bootstrap), baseline: meanInterval(b, options.bootstrap), difference: meanInterval(a.map((x, i) => x - b[i]!), options.bootstrap) };
}

/** Mean with a percentile bootstrap 95% interval. */
export function meanInterval(xs: readonly number[], bootstrap = 2000, seed = 11): Interval {
  const n = xs.length;
  if (n === 0) return { estimate: NaN, low: NaN, high: NaN };
  const rng = createRng(seed);
  const means: number[] = [];
  for (let b = 0; b < bootstrap; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += xs[Math.floor(rng.next() * n)]!;
    means.push(s / n);
  }
  means.sort((x, y) => x - y);
  return { estimate: xs.reduce((p, q) => p + q, 0) / n, low: quantile(means, 0.025), high: quantile(means, 0.975) };
}
