// The learned half of the crisis gate: logistic regression over signed hashed word uni/bi-grams
// of the writer's own words, trained on the development sets only (datasets/safety/dev*.jsonl).
// The rules recognise a crisis that is *said*; this model picks up the vocabulary of crises that
// are *described* (plans, arrangements, methods, euphemisms) that no single pattern names.
//
//   features: normalise as the rules do, drop quotations of other people (quotes.ts), then
//             signed hashed uni/bi-grams, each valued 1/sqrt(#grams)   (src/learn/hashing.ts)
//   score     p = sigmoid(b + sum_i w[id_i] * x_i)
//   loss      class-weighted log loss: crisis examples weigh n_ok / n_crisis, so both classes
//             count equally; L2 by decoupled weight decay (AdamW, src/learn/adam.ts)
//   threshold chosen on out-of-fold scores (k-fold cross-validation on the development sets), as
//             the lowest score at which out-of-fold false positives on ordinary distress stay at or
//             under `maxDistressFp`; the final model is trained on all development data.
// Training is deterministic: a seeded shuffle and fixed epochs give the same weights bit for bit.
import fs from 'node:fs';
import path from 'node:path';
import { Adam, type Param } from '../learn/adam.ts';
import { FeatureHasher, type HashedBag } from '../learn/hashing.ts';
import { createRng } from '../util/rng.ts';
import { MAX_CLASSIFIED_CHARS } from './classifier.ts';
import type { LabelledExample } from './evaluation.ts';
import type { Language } from './language.ts';
import { normalizeText } from './normalize.ts';
import { english } from './patterns/en.ts';
import { splitQuotations } from './quotes.ts';

export const LEXICAL_FORMAT = 'mascot-safety-lexical/1';

/** The shipped weights, and the labelled sets they are trained from (every dev*.jsonl there). */
export const DEFAULT_LEXICAL_MODEL = path.resolve(import.meta.dirname, '../../models/safety-lexical.json');
export const SAFETY_DATASETS = path.resolve(import.meta.dirname, '../../datasets/safety');

/** The development sets: only these may train the classifier or choose its threshold. */
export function developmentSetFiles(dir = SAFETY_DATASETS): string[] {
  return fs.readdirSync(dir).filter((f) => /^dev(?:-[a-z0-9]+)?\.jsonl$/.test(f)).sort();
}

export interface LexicalTrainingOptions {
  buckets: number;
  epochs: number;
  batchSize: number;
  lr: number;
  weightDecay: number;
  seed: number;
  folds: number;
  /** Highest out-of-fold false-positive rate on ordinary distress the threshold may allow. */
  maxDistressFp: number;
}

export const DEFAULT_TRAINING: LexicalTrainingOptions = {
  buckets: 2 ** 15,
  epochs: 40,
  batchSize: 16,
  lr: 0.05,
  weightDecay: 1e-4,
  seed: 20261202,
  folds: 5,
  maxDistressFp: 0.02,
};

/** The weights file (`models/safety-lexical.json`). */
export interface LexicalModelFile {
  format: typeof LEXICAL_FORMAT;
  language: string;
  buckets: number;
  maxN: number;
  bias: number;
  /** Non-zero weights only: [bucket, weight] pairs. */
  weights: [number, number][];
  threshold: number;
  training: {
    files: string[];
    examples: { crisis: number; distress: number; other: number };
    options: LexicalTrainingOptions;
    /** Out-of-fold figures at the chosen threshold, on the development sets. */
    crossValidation: { recall: number; fpDistress: number; fpOther: number };
  };
}

const NAMESPACE = 'w';
const MAX_N = 2;
const MAX_TOKENS = 400;

function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

/** Hashed features of the writer's own words (and of quotations the writer or someone close said). */
export function lexicalFeatures(raw: string, hasher: FeatureHasher, language: Language = english): HashedBag {
  const text = raw.length > MAX_CLASSIFIED_CHARS ? `${raw.slice(0, 24_000)}\n${raw.slice(-8_000)}` : raw;
  const { own, quotations } = splitQuotations(normalizeText(text, language.rewrites), language.quotes);
  const words = [own, ...quotations.filter((q) => q.voice !== 'other').map((q) => q.text)].join('\n');
  const bag: HashedBag = { ids: [], weights: [] };
  hasher.addText(bag, NAMESPACE, words, { maxN: MAX_N, maxTokens: MAX_TOKENS });
  return bag;
}

export class LexicalClassifier {
  private readonly hasher: FeatureHasher;
  private readonly weights: Float64Array;

  constructor(readonly file: LexicalModelFile, readonly language: Language = english) {
    this.hasher = new FeatureHasher({ buckets: file.buckets, signed: true });
    this.weights = new Float64Array(file.buckets);
    for (const [i, w] of file.weights) this.weights[i] = w;
  }

  get threshold(): number {
    return this.file.threshold;
  }

  /** Probability-like crisis score in (0, 1). */
  score(text: string): number {
    return scoreWith({ bias: this.file.bias, weights: this.weights }, lexicalFeatures(text, this.hasher, this.language));
  }

  /** Read and check a weights file; the error names the file and what is wrong. */
  static load(path: string, language: Language = english): LexicalClassifier {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`crisis model ${path}: cannot read it (${(err as Error).message.slice(0, 120)}); rebuild it with mascot safety train`);
    }
    const problem = checkModelFile(parsed, language);
    if (problem) throw new Error(`crisis model ${path}: ${problem}; rebuild it with mascot safety train`);
    return new LexicalClassifier(parsed as LexicalModelFile, language);
  }
}

function checkModelFile(v: unknown, language: Language): string | undefined {
  if (typeof v !== 'object' || v === null) return 'not a JSON object';
  const f = v as Partial<LexicalModelFile>;
  if (f.format !== LEXICAL_FORMAT) return `format is ${JSON.stringify(f.format)}, expected "${LEXICAL_FORMAT}"`;
  if (f.language !== language.code) return `trained for language ${JSON.stringify(f.language)}, not "${language.code}"`;
  if (!Number.isInteger(f.buckets) || f.buckets! < 2 || f.buckets! > 2 ** 24) return '"buckets" must be an integer between 2 and 2^24';
  if (f.maxN !== MAX_N) return `"maxN" must be ${MAX_N}`;
  if (typeof f.bias !== 'number' || !Number.isFinite(f.bias)) return '"bias" must be a finite number';
  if (typeof f.threshold !== 'number' || !(f.threshold > 0 && f.threshold < 1)) return '"threshold" must be between 0 and 1';
  if (!Array.isArray(f.weights)) return '"weights" must be an array of [bucket, weight] pairs';
  for (const [k, pair] of f.weights.entries()) {
    if (!Array.isArray(pair) || pair.length !== 2 || !Number.isInteger(pair[0]) || pair[0] < 0 || pair[0] >= f.buckets! || !Number.isFinite(pair[1]))
      return `weights[${k}] must be [bucket in 0..${f.buckets! - 1}, finite weight]`;
  }
  return undefined;
}

interface Encoded {
  bag: HashedBag;
  y: 0 | 1;
  label: LabelledExample['label'];
}

/** Fit bias and weights by class-weighted logistic regression with AdamW (deterministic). */
function fit(data: readonly Encoded[], o: LexicalTrainingOptions): { bias: number; weights: Float64Array } {
  const w: Param = { name: 'w', value: new Float64Array(o.buckets), grad: new Float64Array(o.buckets), rowWidth: 1, touched: new Set() };
  const b: Param = { name: 'b', value: new Float64Array(1), grad: new Float64Array(1) };
  const adam = new Adam([w, b], { lr: o.lr, weightDecay: o.weightDecay });
  const positives = data.filter((d) => d.y === 1).length;
  const positiveWeight = positives > 0 ? (data.length - positives) / positives : 1;
  const rng = createRng(o.seed);
  const order = data.map((_, i) => i);
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    // Fisher-Yates with the seeded generator.
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (let start = 0; start < order.length; start += o.batchSize) {
      const batch = order.slice(start, start + o.batchSize);
      for (const k of batch) {
        const { bag, y } = data[k]!;
        let z = b.value[0]!;
        for (let i = 0; i < bag.ids.length; i++) z += w.value[bag.ids[i]!]! * bag.weights[i]!;
        // d(log loss)/dz = p - y, scaled by the class weight and the batch mean.
        const g = ((sigmoid(z) - y) * (y === 1 ? positiveWeight : 1)) / batch.length;
        b.grad[0]! += g;
        for (let i = 0; i < bag.ids.length; i++) {
          w.grad[bag.ids[i]!]! += g * bag.weights[i]!;
          w.touched!.add(bag.ids[i]!);
        }
      }
      adam.step();
      adam.zeroGrad();
    }
  }
  return { bias: b.value[0]!, weights: w.value };
}

function scoreWith(model: { bias: number; weights: Float64Array }, bag: HashedBag): number {
  let z = model.bias;
  for (let i = 0; i < bag.ids.length; i++) z += model.weights[bag.ids[i]!]! * bag.weights[i]!;
  return sigmoid(z);
}

/**
 * The lowest threshold whose false-positive rate on distress stays at or under `maxFp`: one above
 * the distress scores that may be flagged, i.e. just over the floor(maxFp * n)+1-th highest.
 */
export function chooseThreshold(distressScores: readonly number[], maxFp: number): number {
  const sorted = [...distressScores].sort((a, b) => b - a);
  const allowed = Math.floor(maxFp * sorted.length);
  const boundary = sorted[allowed] ?? 0;
  // Flagged means score >= threshold; stay strictly above the first distress score not allowed.
  return Math.min(0.999, Math.max(0.5, boundary + 1e-6));
}

export function trainLexical(examples: readonly LabelledExample[], files: string[], options: Partial<LexicalTrainingOptions> = {}, language: Language = english): LexicalModelFile {
  const o = { ...DEFAULT_TRAINING, ...options };
  if (examples.length < o.folds * 2) throw new Error(`training needs at least ${o.folds * 2} labelled examples (got ${examples.length})`);
  const hasher = new FeatureHasher({ buckets: o.buckets, signed: true });
  const data: Encoded[] = examples.map((e) => ({ bag: lexicalFeatures(e.text, hasher, language), y: e.label === 'crisis' ? 1 : 0, label: e.label }));

  // Out-of-fold scores: fold k holds every k-th example of a seeded permutation.
  const rng = createRng(o.seed ^ 0x5eed);
  const perm = data.map((_, i) => i);
  for (let i = perm.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [perm[i], perm[j]] = [perm[j]!, perm[i]!];
  }
  const oof = new Float64Array(data.length);
  for (let k = 0; k < o.folds; k++) {
    const held = perm.filter((_, i) => i % o.folds === k);
    const heldSet = new Set(held);
    const model = fit(
      data.filter((_, i) => !heldSet.has(i)),
      { ...o, seed: o.seed + k + 1 },
    );
    for (const i of held) oof[i] = scoreWith(model, data[i]!.bag);
  }
  const distress = data.flatMap((d, i) => (d.label === 'distress' ? [oof[i]!] : []));
  const threshold = chooseThreshold(distress, o.maxDistressFp);
  const rateOf = (label: LabelledExample['label']) => {
    const idx = data.flatMap((d, i) => (d.label === label ? [i] : []));
    return idx.length === 0 ? 0 : idx.filter((i) => oof[i]! >= threshold).length / idx.length;
  };

  const final = fit(data, o);
  const weights: [number, number][] = [];
  // Six significant digits keep the file small and the scores unchanged to ~1e-6.
  for (let i = 0; i < final.weights.length; i++) if (final.weights[i] !== 0) weights.push([i, Number(final.weights[i]!.toPrecision(6))]);
  const count = (label: LabelledExample['label']) => examples.filter((e) => e.label === label).length;
  return {
    format: LEXICAL_FORMAT,
    language: language.code,
    buckets: o.buckets,
    maxN: MAX_N,
    bias: Number(final.bias.toPrecision(6)),
    weights,
    threshold: Number(threshold.toPrecision(6)),
    training: {
      files,
      examples: { crisis: count('crisis'), distress: count('distress'), other: count('other') },
      options: o,
      crossValidation: { recall: round3(rateOf('crisis')), fpDistress: round3(rateOf('distress')), fpOther: round3(rateOf('other')) },
    },
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
