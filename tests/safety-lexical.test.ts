// The learned lexical crisis classifier: deterministic training that reproduces the shipped
// weights, a threshold chosen on development data, the gate's OR with the rules and the rules'
// vetoes, and clear errors for a broken weights file.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CrisisDetector } from '../src/safety/detector.ts';
import { evaluate, parseLabelledSet, type LabelledExample } from '../src/safety/evaluation.ts';
import {
  chooseThreshold,
  DEFAULT_LEXICAL_MODEL,
  DEFAULT_WORD_VECTORS,
  developmentSetFiles,
  foldsBySet,
  LexicalClassifier,
  loadWordVectors,
  SAFETY_DATASETS,
  trainLexical,
  type TrainingSet,
} from '../src/safety/lexical.ts';
import { tokenize } from '../src/learn/hashing.ts';
import { loadSuite } from '../src/sim/scenario.ts';
import { tempDir } from './support/core.ts';

const devSets = (): TrainingSet[] =>
  developmentSetFiles().map((file) => ({ file, examples: parseLabelledSet(fs.readFileSync(path.join(SAFETY_DATASETS, file), 'utf8'), file).examples }));
const devExamples = (): LabelledExample[] => devSets().flatMap((s) => s.examples);
const context = { vectors: loadWordVectors(), decides: new CrisisDetector().leavesToClassifier };

const lexical = LexicalClassifier.load(DEFAULT_LEXICAL_MODEL);
const detector = new CrisisDetector({ lexical });

describe('training', () => {
  it('trains only on development sets, never on a held-out one', () => {
    const files = developmentSetFiles();
    expect(files).toEqual(expect.arrayContaining(['dev-h.jsonl', 'dev-i.jsonl', 'dev-corpus-1.jsonl']));
    expect(files.some((f) => f.startsWith('heldout'))).toBe(false);
    expect(lexical.file.training.files).toEqual(files);
  });

  it('reproduces the shipped weights bit for bit from the development sets', () => {
    const fresh = trainLexical(devSets(), context);
    expect(`${JSON.stringify(fresh)}\n`).toBe(fs.readFileSync(DEFAULT_LEXICAL_MODEL, 'utf8'));
  });

  it('a different seed gives different weights (the seed is what makes it deterministic)', () => {
    const small = devSets()
      .slice(0, 3)
      .map((s) => ({ ...s, examples: s.examples.filter((_, i) => i % 4 === 0) }));
    const a = trainLexical(small, context, { epochs: 3, folds: 2 });
    const b = trainLexical(small, context, { epochs: 3, folds: 2 });
    const c = trainLexical(small, context, { epochs: 3, folds: 2, seed: 7 });
    expect(b).toEqual(a);
    expect(c.weights).not.toEqual(a.weights);
  });

  it('learns: out-of-fold, it separates crisis from the rest far better than chance', () => {
    const cv = lexical.file.training.crossValidation;
    expect(cv.fpDistress).toBeLessThanOrEqual(0.02);
    expect(cv.fpOrdinary).toBeLessThanOrEqual(0.004);
    expect(cv.recall).toBeGreaterThan(0.4);
  });
});

describe('cross-validation folds', () => {
  it('keeps each set whole and balances the folds by size', () => {
    const sizes = [600, 600, 450, 280, 240, 240, 200, 160, 150];
    const fold = foldsBySet(sizes, 5);
    expect(new Set(fold)).toEqual(new Set([0, 1, 2, 3, 4]));
    const load = [0, 0, 0, 0, 0];
    sizes.forEach((n, i) => (load[fold[i]!]! += n));
    expect(Math.max(...load) - Math.min(...load)).toBeLessThanOrEqual(200);
    expect(foldsBySet([10, 20], 5)).toEqual([1, 0]);
  });
});

describe('threshold', () => {
  it('is the lowest score that keeps distress false positives within the allowed rate', () => {
    const scores = Array.from({ length: 100 }, (_, i) => i / 100); // 0.00 .. 0.99
    const t = chooseThreshold(scores, 0.02);
    expect(scores.filter((s) => s >= t)).toEqual([0.98, 0.99]);
    expect(chooseThreshold(scores, 0)).toBeGreaterThan(0.99);
  });

  it('never falls below 0.5, however the development scores lie', () => {
    expect(chooseThreshold([0.1, 0.2, 0.3], 0.5)).toBe(0.5);
  });

  it('adds at most 2% false positives to the rules on development distress', async () => {
    const distress = devExamples().filter((e) => e.label === 'distress');
    const rulesAlone = new CrisisDetector();
    const added = distress.filter((e) => rulesAlone.classifyLocally(e.text).label === 'ok' && detector.classifyLocally(e.text).label === 'crisis');
    expect(added.length / distress.length).toBeLessThanOrEqual(0.02);
  });
});

describe('the gate: rules OR classifier', () => {
  it('adds a crisis the rules miss, told as an arrangement rather than an act (a development example)', () => {
    const text = "My will is written and my cat's rehomed. I'm ready.";
    const v = detector.classifyLocally(text);
    expect(v.rules.label).toBe('ok');
    expect(v).toMatchObject({ label: 'crisis', source: 'lexical', category: 'unspecified' });
    expect(v.lexical!.score).toBeGreaterThanOrEqual(v.lexical!.threshold);
    expect(new CrisisDetector().classifyLocally(text).label).toBe('ok');
  });

  it('leaves ordinary distress and idioms alone', () => {
    for (const text of ['work has been exhausting and I miss my friends', 'this traffic is killing me', 'my exam is tomorrow and I feel sick'])
      expect(detector.classifyLocally(text).label, text).toBe('ok');
  });

  it("the rules' negation and fiction cancellations veto the classifier", () => {
    const negated = detector.classifyLocally("I'm not suicidal and I have no plans to hurt myself");
    expect(negated.label).toBe('ok');
    expect(negated.lexical?.vetoedBy).toBe('negated');
    const fiction = detector.classifyLocally('in the novel she swallowed thirty tablets');
    expect(fiction.lexical?.vetoedBy).toBe('media');
  });

  it('a word never seen in training still counts, through the pretrained vectors of its neighbours', () => {
    const seen = new Set(devExamples().flatMap((e) => tokenize(e.text)));
    const pairs = [
      ['sedatives', 'sandwiches'],
      ['arsenic', 'cardigans'],
    ];
    for (const [risky, harmless] of pairs) {
      // Neither word is in any development set: only the pooled word vectors can tell them apart.
      for (const w of [risky!, harmless!]) expect(seen.has(w), w).toBe(false);
      expect(lexical.score(`swallowed a handful of ${risky}`), risky).toBeGreaterThan(lexical.score(`swallowed a handful of ${harmless}`) + 0.2);
    }
  });

  it("someone else's quoted words do not reach the classifier; the writer's own do", () => {
    const own = "My will is written and my cat's rehomed. I'm ready.";
    expect(lexical.score(`the song goes "${own}"`)).toBeLessThan(lexical.score(own));
    expect(lexical.score(`I told my sister "${own}"`)).toBeCloseTo(lexical.score(own), 1);
  });

  it('the rules still decide first and name the category', () => {
    expect(detector.classifyLocally('I want to kill myself')).toMatchObject({ label: 'crisis', source: 'rules', category: 'suicide' });
  });
});

// Each figure was measured once, on a set still held out, after the revision it measured was
// committed (docs/safety.md); the gate must not fall below it. J, K and L have since become
// development material (a revision was written from each); M is still held out.
describe.each([
  { file: 'dev-j.jsonl', recall: 82, rulesAlone: 55, fpDistress: 2 },
  { file: 'dev-k.jsonl', recall: 86, rulesAlone: 47, fpDistress: 0 },
  { file: 'dev-l.jsonl', recall: 76, rulesAlone: 52, fpDistress: 0 },
  { file: 'heldout-m.jsonl', recall: 74, rulesAlone: 48, fpDistress: 1 },
])('set $file, evaluated once while held out', ({ file, recall, rulesAlone, fpDistress }) => {
  it(`keeps its measured figures: recall ${recall}/100, rules alone ${rulesAlone}/100, distress false positives ${fpDistress}/80`, async () => {
    const set = parseLabelledSet(fs.readFileSync(path.join(SAFETY_DATASETS, file), 'utf8'), file);
    expect(set.problems).toEqual([]);
    const gate = await evaluate(set.examples, (t) => detector.classifyLocally(t));
    const rules = await evaluate(set.examples, (t) => new CrisisDetector().classifyLocally(t));
    expect(gate.recall.of).toBe(100);
    expect(gate.recall.hits).toBeGreaterThanOrEqual(recall);
    expect(gate.fpDistress.hits).toBeLessThanOrEqual(fpDistress);
    expect(rules.recall.hits).toBeGreaterThanOrEqual(rulesAlone);
  });
});

describe('ordinary conversation the classifier never trained on', () => {
  // What people say in the simulator's scenarios (scenarios/*.yaml): openings, positions, concerns,
  // things shared and steps, from support circles and meetings. None is a crisis, none is in a
  // training set, and most traffic looks like this, so a false alarm here is the costly kind.
  const lines = ['support', 'meeting'].flatMap((suite) =>
    loadSuite(suite).scenarios.flatMap((sc) =>
      sc.kind === 'support'
        ? [sc.opening, ...sc.shares, ...sc.realisations, ...sc.steps, sc.whenRushed]
        : [sc.opening, ...sc.participants.flatMap((p) => [p.position, p.concern]), ...sc.decisions, sc.whenRushed],
    ),
  );

  it('flags at most 0.5% of them (the threshold is chosen for 0.4% on the ordinary corpora, a margin under that)', () => {
    expect(lines.length).toBeGreaterThan(800);
    const flagged = lines.filter((t) => detector.classifyLocally(t).label === 'crisis');
    expect(flagged.length / lines.length, flagged.join('\n')).toBeLessThanOrEqual(0.005);
    expect(lexical.file.training.options.maxOrdinaryFp).toBe(0.004);
  });
});

describe('the weights file', () => {
  it('a missing, corrupt or mismatched file is refused with its path and what is wrong', () => {
    const dir = tempDir();
    const file = path.join(dir, 'm.json');
    expect(() => LexicalClassifier.load(file)).toThrow(new RegExp(`crisis model ${file}: cannot read it`));
    fs.writeFileSync(file, '{"format":');
    expect(() => LexicalClassifier.load(file)).toThrow(/cannot read it .*mascot safety train/);
    const good = JSON.parse(fs.readFileSync(DEFAULT_LEXICAL_MODEL, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...good, threshold: 2 }));
    expect(() => LexicalClassifier.load(file)).toThrow(/"threshold" must be between 0 and 1/);
    fs.writeFileSync(file, JSON.stringify({ ...good, weights: [[good.buckets, 1]] }));
    expect(() => LexicalClassifier.load(file)).toThrow(/weights\[0\] must be \[bucket in 0\.\.\d+, finite weight\]/);
    fs.writeFileSync(file, JSON.stringify({ ...good, format: 'other/1' }));
    expect(() => LexicalClassifier.load(file)).toThrow(/format is "other\/1"/);
    fs.writeFileSync(file, JSON.stringify({ ...good, dense: good.dense.slice(1) }));
    expect(() => LexicalClassifier.load(file)).toThrow(/"dense" must be 200 finite weights/);
  });

  it('refuses word vectors other than the ones it was trained with, or none', () => {
    const dir = tempDir();
    const file = path.join(dir, 'safety-lexical.json');
    fs.copyFileSync(DEFAULT_LEXICAL_MODEL, file);
    expect(() => LexicalClassifier.load(file)).toThrow(/word vectors .*safety-word-vectors\.bin: cannot read it/);
    const bytes = fs.readFileSync(DEFAULT_WORD_VECTORS);
    bytes[bytes.length - 1]! ^= 1; // one component of the last word, still a well-formed file
    fs.writeFileSync(path.join(dir, 'safety-word-vectors.bin'), bytes);
    expect(() => LexicalClassifier.load(file)).toThrow(/trained with other word vectors than safety-word-vectors\.bin/);
  });
});
