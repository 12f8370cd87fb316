// Training of the persona reward model (Bradley-Terry), one readable file. Hyperparameters first.
//
//   r_p(x) = head_p(h(x)) + head_shared(h(x))              h: embedding-bag MLP (src/learn/network.ts)
//   pair loss (persona p, chosen w, rejected l):  L_pair = -log sigmoid(r_p(w) - r_p(l)) = softplus(r_p(l) - r_p(w))
//     dL/dr_p(w) = -sigmoid(r_p(l) - r_p(w)),  dL/dr_p(l) = +sigmoid(r_p(l) - r_p(w))
//   identification loss (a turn written by persona a):   L_id = -log softmax_q(r_q(x))[a]
//     (Plackett-Luce over personas for a fixed text; dL/dr_q = softmax_q - [q = a]); weight ID_WEIGHT
//   The shared head gets the sum of the persona heads' gradients; AdamW with decoupled weight decay.
// Held-out split by context (hash of the context), so no held-out context was seen in training.
// Pairwise accuracy counts ties as errors.
import { Adam } from '../learn/adam.ts';
import { DirectorNetwork, type ForwardResult } from '../learn/network.ts';
import type { Pack } from '../persona/schema.ts';
import { createRng, seedFrom } from '../util/rng.ts';
import { DEFAULT_REWARD_BUCKETS, DENSE_NAMES, REWARD_FEATURE_VERSION, RewardFeaturizer, type RewardFeatures } from './features.ts';
import { foldSharedHead, type RewardModelInfo } from './model.ts';
import { contextKey, type AuthoredTurn, type PreferencePair } from './rubric.ts';

export const REWARD_TRAINING_DEFAULTS = {
  buckets: DEFAULT_REWARD_BUCKETS,
  /** Embedding width and hidden units. */
  emb: 16,
  hidden: 16,
  epochs: 12,
  batchSize: 32,
  lr: 0.01,
  weightDecay: 1e-4,
  maxGradNorm: 5,
  /** Weight of the persona-identification loss next to the pair loss. */
  idWeight: 0.5,
  /** Share of contexts held out for evaluation. */
  heldOut: 0.2,
  seed: 1,
};
export type RewardTrainingOptions = typeof REWARD_TRAINING_DEFAULTS;

interface Encoded<T> {
  item: T;
  heldOut: boolean;
}

/** Accuracy and count of one group of held-out or training items. */
export interface Accuracy {
  n: number;
  accuracy: number | null;
}

export interface RewardTrainingReport {
  pack: string;
  personas: string[];
  featureVersion: string;
  options: RewardTrainingOptions;
  seconds: number;
  pairs: { train: number; heldOut: number; bySource: Record<string, { train: number; heldOut: number }> };
  /** Pairwise accuracy: share of pairs where r_p(chosen) > r_p(rejected). */
  pairwise: { train: Accuracy; heldOut: Accuracy; heldOutBySource: Record<string, Accuracy> };
  /** Persona identification: share of turns whose highest-reward persona is their author. */
  identification: { chance: number; train: Accuracy; heldOut: Accuracy; heldOutBySource: Record<string, Accuracy> };
  /** Mean training loss per epoch. */
  lossCurve: number[];
}

export interface TrainedRewardModel {
  /** The served network (shared head folded in). */
  net: DirectorNetwork;
  info: RewardModelInfo;
  report: RewardTrainingReport;
}

export interface TrainInput {
  pack: Pack;
  pairs: readonly PreferencePair[];
  authored: readonly AuthoredTurn[];
  options?: Partial<RewardTrainingOptions>;
  onEpoch?: (epoch: number, loss: number) => void;
}

/** Is a context in the held-out share? Deterministic in the seed and the context. */
export function isHeldOut(key: string, share: number, seed: number): boolean {
  return (seedFrom(seed, key) % 10_000) / 10_000 < share;
}

export function trainRewardModel(input: TrainInput): TrainedRewardModel {
  const started = Date.now();
  const opts: RewardTrainingOptions = { ...REWARD_TRAINING_DEFAULTS, ...input.options };
  const personas = input.pack.personas.map((p) => p.id);
  const P = personas.length;
  const head = new Map(personas.map((id, i) => [id, i]));
  const featurizer = new RewardFeaturizer(opts.buckets);

  const pairs = input.pairs.filter((p) => head.has(p.personaId));
  const authored = input.authored.filter((a) => head.has(a.personaId));
  if (pairs.length === 0) throw new Error(`no preference pairs for pack "${input.pack.id}" (personas: ${personas.join(', ')})`);

  const encPairs: Encoded<{ p: number; w: RewardFeatures; l: RewardFeatures; source: string }>[] = pairs.map((pair) => ({
    item: {
      p: head.get(pair.personaId)!,
      w: featurizer.features(pair.context, pair.chosen),
      l: featurizer.features(pair.rejectedContext ?? pair.context, pair.rejected),
      source: pair.source,
    },
    heldOut: isHeldOut(contextKey(pair.context), opts.heldOut, opts.seed),
  }));
  const encTurns: Encoded<{ a: number; x: RewardFeatures; source: string }>[] = authored.map((t) => ({
    item: { a: head.get(t.personaId)!, x: featurizer.features(t.context, t.text), source: t.source },
    heldOut: isHeldOut(contextKey(t.context), opts.heldOut, opts.seed),
  }));

  // A held-out text must be unseen: training drops items that contain one (examples recur across pairs).
  const heldTexts = new Set<string>();
  pairs.forEach((pair, i) => encPairs[i]!.heldOut && heldTexts.add(pair.chosen));
  authored.forEach((t, i) => encTurns[i]!.heldOut && heldTexts.add(t.text));
  const trainable = (texts: string[]) => !texts.some((t) => heldTexts.has(t));

  const rng = createRng(opts.seed);
  // P persona heads + 1 shared head.
  const net = DirectorNetwork.initialized({ buckets: opts.buckets, emb: opts.emb, dense: DENSE_NAMES.length, hidden: opts.hidden, actions: P + 1 }, rng);
  const adam = new Adam(net.params, { lr: opts.lr, weightDecay: opts.weightDecay, maxGradNorm: opts.maxGradNorm });
  const mask = new Array<boolean>(P + 1).fill(true);

  type Step = { kind: 'pair'; i: number } | { kind: 'turn'; i: number };
  const steps: Step[] = [
    ...encPairs.flatMap((e, i) => (e.heldOut || !trainable([pairs[i]!.chosen, pairs[i]!.rejected]) ? [] : [{ kind: 'pair' as const, i }])),
    ...(opts.idWeight > 0 ? encTurns.flatMap((e, i) => (e.heldOut || !trainable([authored[i]!.text]) ? [] : [{ kind: 'turn' as const, i }])) : []),
  ];
  const lossCurve: number[] = [];
  for (let epoch = 0; epoch < opts.epochs; epoch++) {
    shuffle(steps, rng);
    let total = 0;
    for (let start = 0; start < steps.length; start += opts.batchSize) {
      const batch = steps.slice(start, start + opts.batchSize);
      adam.zeroGrad();
      const scale = 1 / batch.length;
      for (const s of batch) {
        if (s.kind === 'pair') {
          const { p, w, l } = encPairs[s.i]!.item;
          total += pairLossAndGrad(net, p, w, l, mask, scale);
        } else {
          const { a, x } = encTurns[s.i]!.item;
          total += idLossAndGrad(net, a, x, mask, opts.idWeight * scale);
        }
      }
      adam.step();
    }
    const meanLoss = total / Math.max(1, steps.length);
    lossCurve.push(meanLoss);
    input.onEpoch?.(epoch + 1, meanLoss);
  }

  // Evaluate and calibrate with the served (folded) network, exactly what the ONNX file computes.
  const served = foldSharedHead(net);
  const rewards = (x: RewardFeatures) => Array.from(served.forward({ ...x, mask: mask.slice(0, P) }).logits);
  const pairEval = encPairs.map((e) => {
    const rw = rewards(e.item.w)[e.item.p]!;
    const rl = rewards(e.item.l)[e.item.p]!;
    return { ...e, correct: rw > rl, mid: (rw + rl) / 2 };
  });
  const turnEval = encTurns.map((e) => {
    const r = rewards(e.item.x);
    return { ...e, correct: argmax(r) === e.item.a };
  });

  const midpoints = personas.map((_, p) => {
    const mids = pairEval.filter((e) => !e.heldOut && e.item.p === p).map((e) => e.mid);
    return mids.length > 0 ? mids.reduce((a, b) => a + b, 0) / mids.length : 0;
  });

  const acc = (xs: { correct: boolean }[]): Accuracy => ({ n: xs.length, accuracy: xs.length ? xs.filter((x) => x.correct).length / xs.length : null });
  const bySource = <T extends { item: { source: string }; correct: boolean }>(xs: T[]) => {
    const out: Record<string, Accuracy> = {};
    for (const s of new Set(xs.map((x) => x.item.source))) out[s] = acc(xs.filter((x) => x.item.source === s));
    return out;
  };
  const counts: Record<string, { train: number; heldOut: number }> = {};
  for (const e of encPairs) {
    const c = (counts[e.item.source] ??= { train: 0, heldOut: 0 });
    if (e.heldOut) c.heldOut++;
    else c.train++;
  }
  const heldPairs = pairEval.filter((e) => e.heldOut);
  const heldTurns = turnEval.filter((e) => e.heldOut);
  const report: RewardTrainingReport = {
    pack: input.pack.id,
    personas,
    featureVersion: REWARD_FEATURE_VERSION,
    options: opts,
    seconds: (Date.now() - started) / 1000,
    pairs: { train: encPairs.length - heldPairs.length, heldOut: heldPairs.length, bySource: counts },
    pairwise: { train: acc(pairEval.filter((e) => !e.heldOut)), heldOut: acc(heldPairs), heldOutBySource: bySource(heldPairs) },
    identification: { chance: 1 / P, train: acc(turnEval.filter((e) => !e.heldOut)), heldOut: acc(heldTurns), heldOutBySource: bySource(heldTurns) },
    lossCurve,
  };
  const info: RewardModelInfo = {
    pack: input.pack.id,
    personas,
    featureVersion: REWARD_FEATURE_VERSION,
    denseNames: [...DENSE_NAMES],
    shape: served.shape,
    midpoints,
    version: `${input.pack.id}-${new Date(started).toISOString().slice(0, 10)}-${(seedFrom(opts.seed, JSON.stringify(lossCurve)) >>> 0).toString(16).slice(0, 6)}`,
    training: report as unknown as Record<string, unknown>,
  };
  return { net: served, info, report };
}

/** Bradley-Terry loss of one pair; accumulates its gradient (times `scale`) into the network. */
export function pairLossAndGrad(net: DirectorNetwork, p: number, w: RewardFeatures, l: RewardFeatures, mask: boolean[], scale: number): number {
  const fw = net.forward({ ...w, mask });
  const fl = net.forward({ ...l, mask });
  const shared = net.shape.actions - 1;
  const d = reward(fw, p, shared) - reward(fl, p, shared);
  // softplus(-d), computed stably; dL/dd = -sigmoid(-d).
  const loss = d > 0 ? Math.log1p(Math.exp(-d)) : -d + Math.log1p(Math.exp(d));
  const g = -sigmoid(-d) * scale;
  net.backward(fw, headGrad(net.shape.actions, p, g));
  net.backward(fl, headGrad(net.shape.actions, p, -g));
  return loss;
}

/** Identification cross-entropy of one authored turn (shared head cancels in the softmax). */
export function idLossAndGrad(net: DirectorNetwork, author: number, x: RewardFeatures, mask: boolean[], scale: number): number {
  const f = net.forward({ ...x, mask });
  const P = net.shape.actions - 1;
  const logits = Array.from(f.logits.subarray(0, P));
  const max = Math.max(...logits);
  const exps = logits.map((z) => Math.exp(z - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  const grad = new Float64Array(P + 1);
  for (let q = 0; q < P; q++) grad[q] = (exps[q]! / sum - (q === author ? 1 : 0)) * scale;
  net.backward(f, grad);
  return -Math.log(exps[author]! / sum);
}

function reward(f: ForwardResult, p: number, shared: number): number {
  return f.logits[p]! + f.logits[shared]!;
}

/** dL/dlogits when dL/dr_p = g: persona head p and the shared head both get g. */
function headGrad(heads: number, p: number, g: number): Float64Array {
  const grad = new Float64Array(heads);
  grad[p] = g;
  grad[heads - 1] = g;
  return grad;
}

function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

function argmax(xs: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i]! > xs[best]!) best = i;
  return best;
}

function shuffle<T>(xs: T[], rng: { next(): number }): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
}
