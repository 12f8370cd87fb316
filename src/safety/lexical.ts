// The learned half of the crisis gate: logistic regression over the writer's own words, trained
// on the development sets only (datasets/safety/dev*.jsonl). The rules recognise a crisis that is
// *said*; this model picks up the vocabulary of crises that are *described* (plans, arrangements,
// methods, euphemisms) that no single pattern names.
//
//   text      normalise as the rules do, drop quotations of other people (quotes.ts)
//   x_bag     signed hashed word uni/bi-grams, each valued 1/sqrt(#grams)  (src/learn/hashing.ts)
//   x_dense   mean and element-wise max of the pretrained vectors of its content words
//             (word-vectors.ts): a word never seen in training still counts through its neighbours
//   score     p = sigmoid(b + sum_i w[id_i] * x_bag_i + v . x_dense)
//   loss      class-weighted log loss: crisis examples weigh n_ok / n_crisis, so both classes
//             count equally; L2 by decoupled weight decay (AdamW, src/learn/adam.ts)
//   threshold chosen on out-of-fold scores of a cross-validation whose folds are whole sets, so
//             each fold is scored by a model that never saw its register: the lowest score at which
//             the false positives it adds on ordinary distress (where the rules leave the verdict to
//             it) stay at or under `maxDistressFp`, and those on ordinary messages at or under
//             `maxOrdinaryFp`. The final model is trained on all development data.
// Training is deterministic: a seeded shuffle and fixed epochs give the same weights bit for bit.
import fs from 'node:fs';
import path from 'node:path';
import { Adam, type Param } from '../learn/adam.ts';
import { FeatureHasher, tokenize, type HashedBag } from '../learn/hashing.ts';
import { createRng } from '../util/rng.ts';
import { MAX_CLASSIFIED_CHARS } from './classifier.ts';
import type { LabelledExample } from './evaluation.ts';
import type { Language } from './language.ts';
import { normalizeText } from './normalize.ts';
import { english } from './patterns/en.ts';
import { splitQuotations } from './quotes.ts';
import { WordVectors } from './word-vectors.ts';

export const LEXICAL_FORMAT = 'mascot-safety-lexical/2';

/** The shipped weights and word vectors, and the labelled sets they are trained from (every dev*.jsonl there). */
export const DEFAULT_LEXICAL_MODEL = path.resolve(import.meta.dirname, '../../models/safety-lexical.json');
export const DEFAULT_WORD_VECTORS = path.resolve(import.meta.dirname, '../../models/safety-word-vectors.bin');
export const SAFETY_DATASETS = path.resolve(import.meta.dirname, '../../datasets/safety');

/** The development sets: only these may train the classifier or choose its threshold. */
export function developmentSetFiles(dir = SAFETY_DATASETS): string[] {
  return fs.readdirSync(dir).filter((f) => /^dev(?:-[a-z0-9]+)*\.jsonl$/.test(f)).sort();
}

/** One labelled set: its examples stay together in one cross-validation fold. */
export interface TrainingSet {
  file: string;
  examples: readonly LabelledExample[];
}

export interface LexicalTrainingOptions {
  buckets: number;
  epochs: number;
  batchSize: number;
  lr: number;
  weightDecay: number;
  seed: number;
  folds: number;
  /** Highest out-of-fold false-positive rate the threshold may add on ordinary distress. */
  maxDistressFp: number;
  /** The same on ordinary messages (label other, category ordinary): most traffic is these. */
  maxOrdinaryFp: number;
}

export const DEFAULT_TRAINING: LexicalTrainingOptions = {
  buckets: 2 ** 15,
  epochs: 20,
  batchSize: 16,
  lr: 0.05,
  weightDecay: 1e-4,
  seed: 20261202,
  folds: 5,
  maxDistressFp: 0.02,
  maxOrdinaryFp: 0.004,
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
  /** Weights of the pooled word vectors: the mean's dimensions, then the max's. */
  dense: number[];
  /** The word vectors the model was trained with (a file next to the model). */
  vectors: { file: string; sha256: string; words: number; dims: number };
  threshold: number;
  training: {
    files: string[];
    examples: { crisis: number; distress: number; other: number };
    options: LexicalTrainingOptions;
    /**
     * Out-of-fold figures at the chosen threshold, on the development sets: the classifier's recall
     * on its own, and the false positives it adds to the rules' (where it decides).
     */
    crossValidation: { recall: number; fpDistress: number; fpOther: number; fpOrdinary: number };
  };
}

const NAMESPACE = 'w';
const MAX_N = 2;
const MAX_TOKENS = 400;

// Words that carry grammar rather than topic: left out of the pooled vectors, whose mean they would
// otherwise dominate (the n-grams still see them: "i", "my" and "not" matter there).
const FUNCTION_WORDS = new Set(
  ("a an the and or but if so of at by for with about to from in on into onto off out up over under as than then " +
    "i me my mine myself we us our you your yours he him his she her hers it its they them their this that these those there here " +
    "is am are was were be been being have has had do does did will would shall should can could may might must " +
    "i'm i've i'll i'd it's that's don't doesn't didn't can't won't isn't wasn't just very really too also").split(' '),
);

function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

/** Features of one message, as the model reads it. */
export interface LexicalFeatures {
  bag: HashedBag;
  /** Mean then element-wise max of the content words' vectors (zeros when none is known). */
  dense: Float64Array;
}

/** Features of the writer's own words (and of quotations the writer or someone close said). */
export function lexicalFeatures(raw: string, hasher: FeatureHasher, vectors: WordVectors, language: Language = english): LexicalFeatures {
  const text = raw.length > MAX_CLASSIFIED_CHARS ? `${raw.slice(0, 24_000)}\n${raw.slice(-8_000)}` : raw;
  const { own, quotations } = splitQuotations(normalizeText(text, language.rewrites), language.quotes);
  const words = [own, ...quotations.filter((q) => q.voice !== 'other').map((q) => q.text)].join('\n');
  const bag: HashedBag = { ids: [], weights: [] };
  hasher.addText(bag, NAMESPACE, words, { maxN: MAX_N, maxTokens: MAX_TOKENS });
  const dims = vectors.dims;
  const sum = new Float64Array(dims);
  const max = new Float64Array(dims).fill(-Infinity);
  let known = 0;
  // The same words the n-grams keep: a very long message's last MAX_TOKENS.
  for (const token of tokenize(words).slice(-MAX_TOKENS)) if (!FUNCTION_WORDS.has(token) && vectors.accumulate(token, sum, max)) known++;
  const dense = new Float64Array(2 * dims);
  if (known > 0) for (let d = 0; d < dims; d++) [dense[d], dense[dims + d]] = [sum[d]! / known, max[d]!];
  return { bag, dense };
}

export class LexicalClassifier {
  private readonly hasher: FeatureHasher;
  private readonly model: Model;

  constructor(
    readonly file: LexicalModelFile,
    private readonly vectors: WordVectors,
    readonly language: Language = english,
  ) {
    this.hasher = new FeatureHasher({ buckets: file.buckets, signed: true });
    const weights = new Float64Array(file.buckets);
    for (const [i, w] of file.weights) weights[i] = w;
    this.model = { bias: file.bias, weights, dense: Float64Array.from(file.dense) };
  }

  get threshold(): number {
    return this.file.threshold;
  }

  /** Probability-like crisis score in (0, 1). */
  score(text: string): number {
    return scoreWith(this.model, lexicalFeatures(text, this.hasher, this.vectors, this.language));
  }

  /** Read and check a weights file and its word vectors; the error names the file and what is wrong. */
  static load(file: string, language: Language = english): LexicalClassifier {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`crisis model ${file}: cannot read it (${(err as Error).message.slice(0, 120)}); rebuild it with mascot safety train`);
    }
    const problem = checkModelFile(parsed, language);
    if (problem) throw new Error(`crisis model ${file}: ${problem}; rebuild it with mascot safety train`);
    const model = parsed as LexicalModelFile;
    const vectors = loadWordVectors(path.resolve(path.dirname(file), model.vectors.file));
    if (vectors.sha256 !== model.vectors.sha256)
      throw new Error(`crisis model ${file}: trained with other word vectors than ${model.vectors.file} (sha256 differs); rebuild it with mascot safety train`);
    return new LexicalClassifier(model, vectors, language);
  }
}

// Loaded once per file: every gate in a process shares the 9 MB of vectors.
const loadedVectors = new Map<string, WordVectors>();

export function loadWordVectors(file = DEFAULT_WORD_VECTORS): WordVectors {
  let vectors = loadedVectors.get(file);
  if (!vectors) loadedVectors.set(file, (vectors = WordVectors.load(file)));
  return vectors;
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
  const vec = f.vectors;
  if (typeof vec !== 'object' || vec === null || typeof vec.file !== 'string' || !/^[0-9a-f]{64}$/.test(String(vec.sha256)) || !Number.isInteger(vec.dims) || vec.dims < 1)
    return '"vectors" must name the word-vectors file, its sha256 and its dimensions';
  if (!Array.isArray(f.dense) || f.dense.length !== 2 * vec.dims || !f.dense.every((x) => typeof x === 'number' && Number.isFinite(x)))
    return `"dense" must be ${2 * vec.dims} finite weights (mean and max of ${vec.dims}-dimensional vectors)`;
  return undefined;
}

interface Model {
  bias: number;
  weights: Float64Array;
  dense: Float64Array;
}

interface Encoded extends LexicalFeatures {
  y: 0 | 1;
  label: LabelledExample['label'];
}

function logit(model: Model, x: LexicalFeatures): number {
  let z = model.bias;
  for (let i = 0; i < x.bag.ids.length; i++) z += model.weights[x.bag.ids[i]!]! * x.bag.weights[i]!;
  for (let d = 0; d < x.dense.length; d++) z += model.dense[d]! * x.dense[d]!;
  return z;
}

function scoreWith(model: Model, x: LexicalFeatures): number {
  return sigmoid(logit(model, x));
}

/** Fit by class-weighted logistic regression with AdamW (deterministic). */
function fit(data: readonly Encoded[], o: LexicalTrainingOptions, denseSize: number): Model {
  const w: Param = { name: 'w', value: new Float64Array(o.buckets), grad: new Float64Array(o.buckets), rowWidth: 1, touched: new Set() };
  const v: Param = { name: 'v', value: new Float64Array(denseSize), grad: new Float64Array(denseSize) };
  const b: Param = { name: 'b', value: new Float64Array(1), grad: new Float64Array(1) };
  const adam = new Adam([w, v, b], { lr: o.lr, weightDecay: o.weightDecay });
  const model: Model = { bias: 0, weights: w.value, dense: v.value };
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
        const x = data[k]!;
        model.bias = b.value[0]!;
        // d(log loss)/dz = p - y, scaled by the class weight and the batch mean.
        const g = ((sigmoid(logit(model, x)) - x.y) * (x.y === 1 ? positiveWeight : 1)) / batch.length;
        b.grad[0]! += g;
        for (let i = 0; i < x.bag.ids.length; i++) {
          w.grad[x.bag.ids[i]!]! += g * x.bag.weights[i]!;
          w.touched!.add(x.bag.ids[i]!);
        }
        for (let d = 0; d < denseSize; d++) v.grad[d]! += g * x.dense[d]!;
      }
      adam.step();
      adam.zeroGrad();
    }
  }
  model.bias = b.value[0]!;
  return model;
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

/**
 * Whole sets into `folds` folds of similar size: largest set first, each into the fold with the
 * fewest examples so far (ties to the lower fold). With fewer sets than folds, each set is a fold.
 */
export function foldsBySet(sizes: readonly number[], folds: number): number[] {
  const k = Math.min(folds, sizes.length);
  const load = new Array<number>(k).fill(0);
  const fold = new Array<number>(sizes.length).fill(0);
  const bySize = sizes.map((n, i) => ({ n, i })).sort((a, b) => b.n - a.n || a.i - b.i);
  for (const { n, i } of bySize) {
    const f = load.indexOf(Math.min(...load));
    fold[i] = f;
    load[f]! += n;
  }
  return fold;
}

export interface TrainingContext {
  vectors: WordVectors;
  /**
   * Whether the classifier's verdict counts for a message in the gate (the rules said ok and
   * cancelled nothing that vetoes it; `CrisisDetector.leavesToClassifier`). The threshold limits
   * the false positives the classifier adds, so messages the rules decide are not counted.
   */
  decides: (text: string) => boolean;
  language?: Language;
  /** The vectors' file name, recorded in the model (default: the shipped file's). */
  vectorsFile?: string;
}

export function trainLexical(sets: readonly TrainingSet[], context: TrainingContext, options: Partial<LexicalTrainingOptions> = {}): LexicalModelFile {
  const { vectors, decides, language = english, vectorsFile = path.basename(DEFAULT_WORD_VECTORS) } = context;
  const o = { ...DEFAULT_TRAINING, ...options };
  const examples = sets.flatMap((s) => s.examples);
  if (sets.length < 2) throw new Error(`training needs at least two labelled sets, one to hold out at a time (got ${sets.length})`);
  if (examples.length < o.folds * 2) throw new Error(`training needs at least ${o.folds * 2} labelled examples (got ${examples.length})`);
  const hasher = new FeatureHasher({ buckets: o.buckets, signed: true });
  const data: Encoded[] = examples.map((e) => ({ ...lexicalFeatures(e.text, hasher, vectors, language), y: e.label === 'crisis' ? 1 : 0, label: e.label }));
  const leftToIt = examples.map((e) => decides(e.text));
  const denseSize = 2 * vectors.dims;

  // Out-of-fold scores, each fold a group of whole sets.
  const setFold = foldsBySet(
    sets.map((s) => s.examples.length),
    o.folds,
  );
  const foldOf = sets.flatMap((s, i) => s.examples.map(() => setFold[i]!));
  const oof = new Float64Array(data.length);
  for (let k = 0; k <= Math.max(...setFold); k++) {
    const model = fit(
      data.filter((_, i) => foldOf[i] !== k),
      { ...o, seed: o.seed + k + 1 },
      denseSize,
    );
    data.forEach((x, i) => {
      if (foldOf[i] === k) oof[i] = scoreWith(model, x);
    });
  }
  // A message the rules decide can never be the classifier's false positive: it scores 0.
  const ordinary = (i: number) => examples[i]!.label === 'other' && examples[i]!.category === 'ordinary';
  const oofWhere = (keep: (i: number) => boolean) => data.flatMap((_, i) => (keep(i) ? [leftToIt[i] ? oof[i]! : 0] : []));
  const threshold = Math.max(
    chooseThreshold(
      oofWhere((i) => data[i]!.label === 'distress'),
      o.maxDistressFp,
    ),
    chooseThreshold(oofWhere(ordinary), o.maxOrdinaryFp),
  );
  const rateOf = (keep: (i: number) => boolean, flagged: (i: number) => boolean) => {
    const idx = data.flatMap((_, i) => (keep(i) ? [i] : []));
    return idx.length === 0 ? 0 : idx.filter(flagged).length / idx.length;
  };
  const labelled = (label: LabelledExample['label']) => (i: number) => data[i]!.label === label;
  const added = (i: number) => leftToIt[i]! && oof[i]! >= threshold;

  const final = fit(data, o, denseSize);
  const weights: [number, number][] = [];
  // Six significant digits keep the file small and the scores unchanged to ~1e-6.
  const six = (x: number) => Number(x.toPrecision(6));
  for (let i = 0; i < final.weights.length; i++) if (final.weights[i] !== 0) weights.push([i, six(final.weights[i]!)]);
  const count = (label: LabelledExample['label']) => examples.filter((e) => e.label === label).length;
  return {
    format: LEXICAL_FORMAT,
    language: language.code,
    buckets: o.buckets,
    maxN: MAX_N,
    bias: six(final.bias),
    weights,
    dense: Array.from(final.dense, six),
    vectors: { file: vectorsFile, sha256: vectors.sha256, words: vectors.size, dims: vectors.dims },
    threshold: six(threshold),
    training: {
      files: sets.map((s) => s.file),
      examples: { crisis: count('crisis'), distress: count('distress'), other: count('other') },
      options: o,
      crossValidation: {
        recall: round3(rateOf(labelled('crisis'), (i) => oof[i]! >= threshold)),
        fpDistress: round3(rateOf(labelled('distress'), added)),
        fpOther: round3(rateOf(labelled('other'), added)),
        fpOrdinary: round3(rateOf(ordinary, added)),
      },
    },
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
