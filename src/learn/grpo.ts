// GRPO for the director (stage 2 of MASCOT), where each "completion" is one director action.
//
// Warm start: the network first imitates the shipped heuristic, smoothed toward uniform so the
// policy keeps exploring (cross-entropy to t = (1 - s) pi_heuristic + s uniform_allowed). That
// network is also the reference policy pi_ref of the KL term.
//
// Then, per iteration, for a batch of start states s (conversation prefixes before a decision):
//   pi_old <- pi_theta
//   sample G actions a_1..a_G ~ pi_old(.|s)
//   roll each out for a block of turns in the simulation environment (same seeds within the group,
//     so rewards differ by the action only) and score it with the group reward R_i
//     (+ w_out if the person ends the conversation satisfied in the block, - w_out if they leave;
//      + w_fb * human feedback when a_i is the logged action of a logged state with feedback)
//   A_i = (R_i - mean R) / (std R + 1e-4)                     Bessel-corrected std; flat groups: A = 0
//   for `updatesPerBatch` passes:
//     L(s) = 1/G sum_i -min(rho_i A_i, clip(rho_i, 1-eps, 1+eps) A_i) + beta KL(pi_theta(.|s) || pi_ref(.|s))
//     rho_i = pi_theta(a_i|s) / pi_old(a_i|s);  KL exact over the allowed slots
//     Adam step on mean_s L(s)
import { parseActionKey } from '../core/types.ts';
import type { Policy } from '../director/policy.ts';
import type { FidelityScorer, RewardWeights } from '../eval/group-reward.ts';
import type { Generator } from '../speaker/generator.ts';
import { rollout, type SimStart } from '../sim/environment.ts';
import { createRng, sampleIndex, seedFrom, type Rng } from '../util/rng.ts';
import { Adam } from './adam.ts';
import type { DirectorFeatures, DirectorFeaturizer } from './features.ts';
import { DirectorNetwork } from './network.ts';
import { NetworkPolicy } from './network-policy.ts';
import { clippedSurrogate, crossEntropy, groupAdvantages, klDivergence, klPenalty } from './objectives.ts';

/** Defaults of `mascot train director`; every one is a flag of the same name. */
export const GRPO_DEFAULTS = {
  /** G: actions sampled per state. TRL's default. */
  groupSize: 8,
  /** eps: ratio clip. */
  clipEps: 0.2,
  /** beta: weight of KL(pi_theta || pi_ref). DeepSeekMath used 0.04; here 0.01 let the director move further from the heuristic it starts from, and it did better for it. */
  beta: 0.01,
  /** Adam learning rate of the GRPO phase. */
  lr: 0.002,
  /** Turns a rollout block holds at least (it then ends with the person's reply); about the rest of a conversation. */
  blockTurns: 12,
  /** GRPO iterations. */
  iterations: 120,
  /** Start states per iteration. */
  batchStates: 24,
  /** Optimisation passes per sampled batch (from the second, rho != 1 and the clip matters). */
  updatesPerBatch: 2,
  /** Network size. */
  buckets: 1 << 15,
  emb: 16,
  hidden: 64,
  /** Warm start: epochs imitating the heuristic, its learning rate, and the smoothing s. */
  distillEpochs: 4,
  distillLr: 0.01,
  distillSmoothing: 0.2,
  /**
   * Reward shaping by the conversation's outcome inside the block: + w when the person ends it
   * satisfied, - w when they leave. The group reward alone does not see whether the person was
   * helped to the end, and a director can score well on it by keeping them talking.
   */
  outcomeWeight: 0.5,
  /** Weight of real human feedback (mean reaction/rating in [-1, 1]) added to the logged action's reward. */
  feedbackWeight: 0.5,
  /** Clip the global gradient norm. */
  maxGradNorm: 5,
  seed: 1,
} as const;

export type GrpoConfig = { -readonly [K in keyof typeof GRPO_DEFAULTS]: number };

export interface TrainingStart {
  start: SimStart;
  /** For logged states: the logged action's slot and the mean human feedback on its round. */
  feedback?: { action: number; value: number };
}

export interface IterationStats {
  iteration: number;
  /** Mean group reward of the sampled actions (the policy's expected reward, estimated). */
  reward: number;
  /** Mean KL(pi_theta || pi_ref) over the batch after the update. */
  kl: number;
  /** Mean entropy of pi_theta over the batch. */
  entropy: number;
  /** Share of sampled actions whose ratio was clipped in the last pass. */
  clipFraction: number;
  /** Share of groups whose rewards differed (groups with one reward carry no signal). */
  signal: number;
  gradNorm: number;
  /** States trained on in this iteration, its wall time (rollouts included), and rollouts run. */
  states: number;
  seconds: number;
  statesPerSecond: number;
  rollouts: number;
}

export interface TrainOptions {
  featurizer: DirectorFeaturizer;
  starts: TrainingStart[];
  config: GrpoConfig;
  /** The shipped heuristic, imitated for the warm start. */
  teacher: Policy;
  /** Continue from these weights instead of a fresh warm start. */
  init?: DirectorNetwork;
  /** Speakers' backend in rollouts (default: the offline voice). */
  generator?: (seed: number) => Generator;
  weights?: Partial<RewardWeights>;
  fidelity?: FidelityScorer;
  /** The environment's rollout (replaceable to train against a known reward). */
  rollout?: typeof rollout;
  onDistillEpoch?: (epoch: number, loss: number) => void;
  onIteration?: (stats: IterationStats) => void;
  /** Called every `checkpointEvery` iterations. */
  checkpoint?: (net: DirectorNetwork, iteration: number) => void;
  checkpointEvery?: number;
}

export interface TrainResult {
  net: DirectorNetwork;
  reference: DirectorNetwork;
  history: IterationStats[];
  distillLoss: number[];
}

interface Prepared {
  item: TrainingStart;
  features: DirectorFeatures;
  allowed: number;
}

export async function trainDirector(o: TrainOptions): Promise<TrainResult> {
  const c = o.config;
  if (o.starts.length === 0) throw new Error('no start states to train on');
  const rng = createRng(c.seed);
  const f = o.featurizer;
  const prepared: Prepared[] = o.starts.map((item) => {
    const features = f.extract(item.start.state);
    return { item, features, allowed: features.mask.filter(Boolean).length };
  });
  // A state with one allowed action has nothing to choose.
  const trainable = prepared.filter((p) => p.allowed > 1);
  if (trainable.length === 0) throw new Error('no start state allows more than one action');

  let net: DirectorNetwork;
  const distillLoss: number[] = [];
  if (o.init) net = o.init.clone();
  else {
    net = DirectorNetwork.initialized({ buckets: f.buckets, emb: c.emb, dense: f.denseNames.length, hidden: c.hidden, actions: f.slots.length }, rng);
    await distill(net, trainable, o, rng, distillLoss);
  }
  const reference = net.clone();
  const refProbs = new Map<Prepared, number[]>(trainable.map((p) => [p, reference.forward(p.features).probabilities]));

  const adam = new Adam(net.params, { lr: c.lr, maxGradNorm: c.maxGradNorm });
  const history: IterationStats[] = [];
  const order = shuffled(trainable, rng);
  let cursor = 0;
  for (let iteration = 1; iteration <= c.iterations; iteration++) {
    const began = performance.now();
    const batch: Prepared[] = [];
    for (let k = 0; k < Math.min(c.batchStates, trainable.length); k++) {
      if (cursor === order.length) {
        order.splice(0, order.length, ...shuffled(trainable, rng));
        cursor = 0;
      }
      batch.push(order[cursor++]!);
    }

    // Sample and score the groups under pi_old.
    const old = net.clone();
    const continuation = new NetworkPolicy(old, f, 'grpo', `iteration-${iteration}`);
    let rewardSum = 0;
    let rollouts = 0;
    let withSignal = 0;
    const groups: { p: Prepared; actions: number[]; pOld: number[]; advantages: number[] }[] = [];
    for (const [b, p] of batch.entries()) {
      const pOld = old.forward(p.features).probabilities;
      const actions = Array.from({ length: c.groupSize }, () => sampleIndex(pOld, rng));
      const seed = seedFrom(c.seed, iteration, b);
      const cache = new Map<number, number>();
      const rewards: number[] = [];
      for (const a of actions) {
        let r = cache.get(a);
        if (r === undefined) {
          const result = await (o.rollout ?? rollout)(p.item.start, parseActionKey(f.slots[a]!), {
            policy: continuation,
            generator: o.generator?.(seedFrom(seed, 'voice')),
            blockTurns: c.blockTurns,
            seed,
            weights: o.weights,
            fidelity: o.fidelity,
          });
          rollouts++;
          r = result.reward + c.outcomeWeight * (result.ended === 'resolved' ? 1 : result.ended === 'left' ? -1 : 0);
          if (p.item.feedback && p.item.feedback.action === a) r += c.feedbackWeight * p.item.feedback.value;
          cache.set(a, r);
        }
        rewards.push(r);
        rewardSum += r;
      }
      const advantages = groupAdvantages(rewards);
      if (advantages.some((x) => x !== 0)) withSignal++;
      groups.push({ p, actions, pOld, advantages });
    }

    // Optimise the clipped objective with the KL penalty.
    let clippedCount = 0;
    let gradNorm = 0;
    for (let pass = 0; pass < c.updatesPerBatch; pass++) {
      adam.zeroGrad();
      clippedCount = 0;
      for (const g of groups) {
        const fwd = net.forward(g.p.features);
        const dLogits = new Float64Array(f.slots.length);
        const scale = 1 / groups.length;
        g.actions.forEach((a, i) => {
          if (g.advantages[i] === 0) return;
          const term = clippedSurrogate(fwd.probabilities, g.pOld[a]!, a, g.advantages[i]!, c.clipEps, dLogits, scale / c.groupSize);
          if (term.clipped) clippedCount++;
        });
        if (c.beta > 0) klPenalty(fwd.probabilities, refProbs.get(g.p)!, dLogits, scale * c.beta);
        net.backward(fwd, dLogits);
      }
      gradNorm = adam.step();
    }

    let kl = 0;
    let entropy = 0;
    for (const g of groups) {
      const p = net.forward(g.p.features).probabilities;
      kl += klDivergence(p, refProbs.get(g.p)!) / groups.length;
      for (const x of p) if (x > 0) entropy -= (x * Math.log(x)) / groups.length;
    }
    const seconds = (performance.now() - began) / 1000;
    const stats: IterationStats = {
      iteration,
      reward: rewardSum / (groups.length * c.groupSize),
      kl,
      entropy,
      clipFraction: clippedCount / (groups.length * c.groupSize),
      signal: withSignal / groups.length,
      gradNorm,
      states: groups.length,
      seconds,
      statesPerSecond: groups.length / seconds,
      rollouts,
    };
    history.push(stats);
    o.onIteration?.(stats);
    if (o.checkpoint && o.checkpointEvery && iteration % o.checkpointEvery === 0 && iteration < c.iterations) o.checkpoint(net, iteration);
  }
  return { net, reference, history, distillLoss };
}

/** Warm start: minibatch cross-entropy to the smoothed heuristic distribution. */
async function distill(net: DirectorNetwork, states: Prepared[], o: TrainOptions, rng: Rng, losses: number[]): Promise<void> {
  const c = o.config;
  if (c.distillEpochs <= 0) return;
  const targets = new Map<Prepared, number[]>();
  for (const p of states) {
    const teacher = (await o.teacher.decide(p.item.start.state, createRng(1))).probabilities;
    const k = p.allowed;
    targets.set(
      p,
      teacher.map((t, j) => (p.features.mask[j] ? (1 - c.distillSmoothing) * t + c.distillSmoothing / k : 0)),
    );
  }
  const adam = new Adam(net.params, { lr: c.distillLr, maxGradNorm: c.maxGradNorm });
  const batchSize = 32;
  for (let epoch = 1; epoch <= c.distillEpochs; epoch++) {
    let total = 0;
    const order = shuffled(states, rng);
    for (let i = 0; i < order.length; i += batchSize) {
      const batch = order.slice(i, i + batchSize);
      adam.zeroGrad();
      for (const p of batch) {
        const fwd = net.forward(p.features);
        const dLogits = new Float64Array(fwd.logits.length);
        total += crossEntropy(fwd.probabilities, targets.get(p)!, dLogits, 1 / batch.length);
        net.backward(fwd, dLogits);
      }
      adam.step();
    }
    losses.push(total / order.length);
    o.onDistillEpoch?.(epoch, total / order.length);
  }
}

function shuffled<T>(items: readonly T[], rng: Rng): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}
