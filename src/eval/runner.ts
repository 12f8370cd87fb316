// Runs an evaluation: every scenario of every suite with every system (director policies, their
// best-of-N variants and the ablations) under the same seeds, so each comparison is paired (same
// person, same profile, same random streams). Each conversation is scored with the group reward
// over the whole conversation, the simulated person's outcome, and optionally an LLM judge. Results
// are deterministic for offline runs: conversations own their random streams, and results are kept
// in plan order.
import type { Config } from '../config.ts';
import type { Turn } from '../core/types.ts';
import type { Policy } from '../director/policy.ts';
import type { Pack } from '../persona/schema.ts';
import type { Generator } from '../speaker/generator.ts';
import type { Ranker } from '../speaker/speaker.ts';
import { DEFAULT_MAX_ROUNDS, conversationSeeds, offlineUser, profileFor, runConversation } from '../sim/run.ts';
import { splitOf, type Scenario, type Suite, type UserProfile } from '../sim/scenario.ts';
import type { SimulatedUser } from '../sim/user.ts';
import { genericVoices, RandomOrderPolicy, type Ablation } from './ablations.ts';
import { bestOfName, MAX_BEST_OF, recordingRanker, type BestOfNPlan, type BestOfNStats } from './best-of-n.ts';
import { groupReward, type FidelityScorer, type RewardWeights } from './group-reward.ts';
import type { ConversationJudge } from './judge.ts';
import { closePolicy, resolvePolicy } from './policies.ts';

/** A column of the report. */
export interface Metric {
  key: string;
  label: string;
  /** Which direction is better (for the bold best value); 'none' for descriptive columns. */
  better: 'higher' | 'lower' | 'none';
  group: 'collective' | 'outcome' | 'agent' | 'judged';
}

/** Collective metrics from the group reward (0-100), then outcomes of the simulated person. */
export const OFFLINE_METRICS: Metric[] = [
  { key: 'fidelity', label: 'Fidelity', better: 'higher', group: 'collective' },
  { key: 'originality', label: 'Originality', better: 'higher', group: 'collective' },
  { key: 'relevance', label: 'Relevance', better: 'higher', group: 'collective' },
  { key: 'engagement', label: 'Engagement', better: 'higher', group: 'collective' },
  { key: 'overall', label: 'Overall', better: 'higher', group: 'collective' },
  { key: 'overTalk', label: 'Over-talk', better: 'lower', group: 'outcome' },
  { key: 'needsMet', label: 'Needs met', better: 'higher', group: 'outcome' },
  { key: 'resolved', label: 'Resolved', better: 'higher', group: 'outcome' },
  { key: 'turnsPerRound', label: 'Turns/round', better: 'none', group: 'outcome' },
];

/**
 * With best-of-N ranked by the reward model that also scores Fidelity, Fidelity is partly circular
 * (each posted turn is the candidate that model liked best); the role/strategy check is reported
 * next to it as a second opinion.
 */
export const FIDELITY_CHECK_METRIC: Metric = { key: 'fidelityCheck', label: 'Fidelity (check)', better: 'higher', group: 'collective' };

export type UserFactory = (scenario: Scenario, profile: UserProfile, seed: number) => SimulatedUser;

export interface EvalPlan {
  suites: Suite[];
  packs: Map<string, Pack>;
  /** Policy names (resolvePolicy). */
  policies: string[];
  ablations: Ablation[];
  /** The policy the ablations modify (default: the last of `policies`). */
  ablationBase?: string;
  seeds: number[];
  profiles: UserProfile[];
  maxRounds?: number;
  weights: RewardWeights;
  config: Config;
  /** The simulated person (default: the offline user). */
  user?: UserFactory;
  userName?: string;
  /** Scores each finished conversation on the paper's rubric (the llm judge). */
  judge?: ConversationJudge;
  /** Backend of the speakers (default: a fresh offline voice per conversation), and its name in the report. */
  generator?: (seed: number) => Generator;
  voiceName?: string;
  /** Fidelity scorer of a pack (default: the role/strategy check); `fidelityName` describes it in the report. */
  fidelity?: (pack: Pack) => FidelityScorer;
  fidelityName?: string;
  /** Best-of-N variants of policies ("<policy> (best-of-N)"), paired with N=1 (src/eval/best-of-n.ts). */
  bestOf?: BestOfNPlan;
  /** Conversations run at once (offline runs are CPU-bound: 1 is as fast). */
  concurrency?: number;
  onProgress?: (p: { done: number; total: number; system: string; scenario: string; seed: number }) => void;
}

export interface ConversationResult {
  suite: string;
  split: string;
  scenario: string;
  seed: number;
  system: string;
  profile: string;
  rounds: number;
  ended: 'resolved' | 'left' | 'open' | 'error';
  /** Metric key -> value (null when not available, e.g. needs with an llm user). */
  metrics: Record<string, number | null>;
  transcript: { name: string; personaId?: string; strategy?: string; text: string }[];
  /** What went wrong, when the person or the judge failed. */
  errors: string[];
  /** What best-of-N ranking did in this conversation (best-of systems only). */
  bestOf?: BestOfNStats;
}

export interface EvalResults {
  systems: string[];
  metrics: Metric[];
  conversations: ConversationResult[];
  meta: {
    suites: { name: string; file: string; pack: string; splits: string[]; scenarios: number }[];
    seeds: number[];
    user: string;
    judge: string | null;
    voice: string;
    fidelity: string;
    weights: RewardWeights;
    maxRounds: number;
    ablations: Ablation[];
    ablationBase: string | null;
    bestOf: { sizes: number[]; policies: string[]; ranker: string } | null;
  };
}

interface System {
  name: string;
  policy: Policy;
  ablation?: Ablation;
  /** Candidates per turn, ranked by `ranker` (best-of-N). */
  bestOf?: number;
  ranker?: Ranker;
}

export async function runEvaluation(plan: EvalPlan): Promise<EvalResults> {
  if (plan.policies.length === 0) throw new Error('no policies to evaluate');
  const base = plan.ablations.length > 0 ? (plan.ablationBase ?? plan.policies.at(-1)!) : null;
  const maxRounds = plan.maxRounds ?? DEFAULT_MAX_ROUNDS;
  const bestOfPolicies = plan.bestOf ? (plan.bestOf.policies ?? plan.policies) : [];
  for (const n of plan.bestOf?.sizes ?? []) if (!Number.isInteger(n) || n < 2 || n > MAX_BEST_OF) throw new Error(`best-of-N: ${n} candidates is not a whole number from 2 to ${MAX_BEST_OF}`);
  for (const p of bestOfPolicies) if (!plan.policies.includes(p)) throw new Error(`best-of-N: policy "${p}" is not one of the evaluated policies (${plan.policies.join(', ')})`);
  const jobs: (() => Promise<ConversationResult>)[] = [];
  const opened: Policy[] = [];
  let systemNames: string[] = [];

  try {
    for (const suite of plan.suites) {
      const pack = plan.packs.get(suite.pack);
      if (!pack) throw new Error(`suite "${suite.name}" (${suite.file}) needs pack "${suite.pack}", which is not loaded (loaded: ${[...plan.packs.keys()].join(', ')})`);
      const systems: System[] = [];
      for (const name of plan.policies) {
        const policy = await resolvePolicy(name, { pack, config: plan.config });
        opened.push(policy);
        systems.push({ name, policy });
      }
      if (plan.bestOf && plan.bestOf.sizes.length > 0) {
        const ranker = plan.bestOf.ranker(pack.id);
        for (const n of plan.bestOf.sizes)
          for (const name of bestOfPolicies) systems.push({ name: bestOfName(name, n), policy: systems.find((s) => s.name === name)!.policy, bestOf: n, ranker });
      }
      if (base) {
        const basePolicy = systems.find((s) => s.name === base)?.policy ?? (await resolvePolicy(base, { pack, config: plan.config }));
        for (const ablation of plan.ablations)
          systems.push({ name: `${base} (${ablation})`, policy: ablation === 'random-order' ? new RandomOrderPolicy(basePolicy) : basePolicy, ablation });
      }
      systemNames = systems.map((s) => s.name);
      for (const seed of plan.seeds)
        for (const scenario of suite.scenarios)
          for (const system of systems) jobs.push(() => runOne(plan, suite, pack, scenario, seed, system, maxRounds));
    }

    const results: ConversationResult[] = new Array(jobs.length);
    let next = 0;
    let done = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
        done++;
        const r = results[i]!;
        plan.onProgress?.({ done, total: jobs.length, system: r.system, scenario: r.scenario, seed: r.seed });
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency ?? 1, jobs.length)) }, worker));

    const metrics = [...OFFLINE_METRICS, ...(plan.judge ? plan.judge.metrics : [])];
    if (withFidelityCheck(plan)) metrics.splice(1, 0, FIDELITY_CHECK_METRIC);
    return {
      systems: systemNames,
      metrics,
      conversations: results,
      meta: {
        suites: plan.suites.map((s) => ({ name: s.name, file: s.file, pack: s.pack, splits: s.splits, scenarios: s.scenarios.length })),
        seeds: plan.seeds,
        user: plan.userName ?? 'offline',
        judge: plan.judge?.name ?? null,
        voice: plan.voiceName ?? 'the built-in offline voice (not a language model)',
        fidelity: plan.fidelityName ?? 'role/strategy check',
        weights: plan.weights,
        maxRounds,
        ablations: plan.ablations,
        ablationBase: base,
        bestOf: plan.bestOf && plan.bestOf.sizes.length > 0 ? { sizes: plan.bestOf.sizes, policies: bestOfPolicies, ranker: plan.bestOf.rankerName } : null,
      },
    };
  } finally {
    for (const p of new Set(opened)) await closePolicy(p);
  }
}

async function runOne(plan: EvalPlan, suite: Suite, pack: Pack, scenario: Scenario, seed: number, system: System, maxRounds: number): Promise<ConversationResult> {
  const profile = profileFor(scenario, seed, plan.profiles);
  const seeds = conversationSeeds(seed, scenario.id);
  const user = plan.user ? plan.user(scenario, profile, seeds.user) : offlineUser(scenario, profile, seeds.user);
  const initialNeeds = user.needs();
  const errors: string[] = [];
  const personas = pack.personas.filter((p) => p.enabled);
  const ranking = system.bestOf && system.ranker ? recordingRanker(system.ranker, system.bestOf) : undefined;
  const conversation = await runConversation({
    pack,
    scenario,
    seed,
    policy: system.policy,
    user,
    profiles: plan.profiles,
    generator: plan.generator?.(seeds.voice),
    speakerOptions: ranking ? { candidates: ranking.stats.n, ranker: ranking.ranker } : undefined,
    personas,
    voices: system.ablation === 'no-persona' ? genericVoices(personas) : undefined,
    maxRounds,
  });
  if (conversation.failure) errors.push(`conversation stopped: ${conversation.failure}`);

  const history = conversation.history;
  const engagements = conversation.engagements;
  const engagement = engagements.length > 0 ? engagements.reduce((a, b) => a + b, 0) / engagements.length : 0;
  const block = { pack, personas, context: history.slice(0, 1), turns: history.slice(1), engagement };
  const reward = await groupReward(block, { weights: plan.weights, fidelity: plan.fidelity?.(pack) });
  const botTurns = history.filter((t) => t.author.isBot).length;
  if (ranking) ranking.stats.single = botTurns - ranking.stats.ranked;
  const finalNeeds = user.needs();
  const sum = (n: typeof finalNeeds) => (n ? n.explore + n.insight + n.action : 0);
  const pct = (x: number | null) => (x === null ? null : 100 * x);
  const metrics: Record<string, number | null> = {
    fidelity: pct(reward.fidelity),
    ...(withFidelityCheck(plan) ? { fidelityCheck: pct((await groupReward(block, { weights: plan.weights })).fidelity) } : {}),
    originality: pct(reward.originality),
    relevance: pct(reward.relevance),
    engagement: pct(reward.engagement),
    overall: pct(reward.total),
    overTalk: pct(reward.overTalk),
    needsMet: initialNeeds && finalNeeds && sum(initialNeeds) > 0 ? 100 * (1 - sum(finalNeeds) / sum(initialNeeds)) : null,
    resolved: conversation.ended === 'resolved' ? 100 : 0,
    turnsPerRound: botTurns / Math.max(1, engagements.length),
  };

  if (plan.judge) {
    try {
      Object.assign(metrics, await plan.judge.score({ pack, scenario, transcript: history }));
    } catch (err) {
      errors.push(`judge: ${(err as Error).message}`);
      for (const m of plan.judge.metrics) metrics[m.key] = null;
    }
  }
  return {
    suite: suite.name,
    split: splitOf(scenario),
    scenario: scenario.id,
    seed,
    system: system.name,
    profile: profile.id,
    rounds: engagements.length,
    ended: conversation.failure ? 'error' : (conversation.ended ?? 'open'),
    metrics,
    transcript: history.map(transcriptLine),
    errors,
    ...(ranking ? { bestOf: ranking.stats } : {}),
  };
}

/** The role/strategy check is shown next to a model's Fidelity when best-of-N ranks with a model. */
function withFidelityCheck(plan: EvalPlan): boolean {
  return plan.fidelity !== undefined && (plan.bestOf?.sizes.length ?? 0) > 0;
}

function transcriptLine(t: Turn): ConversationResult['transcript'][number] {
  return { name: t.author.name, ...(t.author.personaId ? { personaId: t.author.personaId } : {}), ...(t.strategy ? { strategy: t.strategy } : {}), text: t.text };
}

