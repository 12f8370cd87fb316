// The learned lexical crisis classifier: deterministic training that reproduces the shipped
// weights, a threshold chosen on development data, the gate's OR with the rules and the rules'
// vetoes, and clear errors for a broken weights file.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CrisisDetector } from '../src/safety/detector.ts';
import { evaluate, parseLabelledSet, type LabelledExample } from '../src/safety/evaluation.ts';
import { chooseThreshold, DEFAULT_LEXICAL_MODEL, developmentSetFiles, LexicalClassifier, SAFETY_DATASETS, trainLexical } from '../src/safety/lexical.ts';
import { tempDir } from './support/core.ts';

const devExamples = (): LabelledExample[] =>
  developmentSetFiles().flatMap((f) => parseLabelledSet(fs.readFileSync(path.join(SAFETY_DATASETS, f), 'utf8'), f).examples);

const lexical = LexicalClassifier.load(DEFAULT_LEXICAL_MODEL);
const detector = new CrisisDetector({ lexical });

describe('training', () => {
  it('trains only on development sets, never on a held-out one', () => {
    const files = developmentSetFiles();
    expect(files).toContain('dev-h.jsonl');
    expect(files.some((f) => f.startsWith('heldout'))).toBe(false);
    expect(lexical.file.training.files).toEqual(files);
  });

  it('reproduces the shipped weights bit for bit from the development sets', () => {
    const fresh = trainLexical(devExamples(), developmentSetFiles());
    expect(`${JSON.stringify(fresh)}\n`).toBe(fs.readFileSync(DEFAULT_LEXICAL_MODEL, 'utf8'));
  });

  it('a different seed gives different weights (the seed is what makes it deterministic)', () => {
    const small = devExamples().filter((_, i) => i % 4 === 0);
    const a = trainLexical(small, ['subset'], { epochs: 3, folds: 2 });
    const b = trainLexical(small, ['subset'], { epochs: 3, folds: 2 });
    const c = trainLexical(small, ['subset'], { epochs: 3, folds: 2, seed: 7 });
    expect(b).toEqual(a);
    expect(c.weights).not.toEqual(a.weights);
  });

  it('learns: out-of-fold, it separates crisis from the rest far better than chance', () => {
    const cv = lexical.file.training.crossValidation;
    expect(cv.fpDistress).toBeLessThanOrEqual(0.02);
    expect(cv.recall).toBeGreaterThan(0.4);
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

  it('keeps distress false positives of the gate at or under 2% on the development sets', async () => {
    const distress = devExamples().filter((e) => e.label === 'distress');
    const e = await evaluate(distress, (t) => {
      const v = detector.classifyLocally(t);
      return { label: v.label, patterns: v.patterns };
    });
    expect(e.fpDistress.value).toBeLessThanOrEqual(0.02);
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

  it("someone else's quoted words do not reach the classifier; the writer's own do", () => {
    const own = "My will is written and my cat's rehomed. I'm ready.";
    expect(lexical.score(`the song goes "${own}"`)).toBeLessThan(lexical.score(own));
    expect(lexical.score(`I told my sister "${own}"`)).toBeCloseTo(lexical.score(own), 1);
  });

  it('the rules still decide first and name the category', () => {
    expect(detector.classifyLocally('I want to kill myself')).toMatchObject({ label: 'crisis', source: 'rules', category: 'suicide' });
  });
});

describe('held-out set I (evaluated once, after revision 7 and the classifier were committed; docs/safety.md)', () => {
  it('keeps its measured figures: recall 68/100, rules alone 46/100, distress false positives 2/80', async () => {
    const set = parseLabelledSet(fs.readFileSync(path.join(SAFETY_DATASETS, 'heldout-i.jsonl'), 'utf8'), 'heldout-i.jsonl');
    expect(set.problems).toEqual([]);
    const gate = await evaluate(set.examples, (t) => detector.classifyLocally(t));
    const rulesAlone = await evaluate(set.examples, (t) => new CrisisDetector().classifyLocally(t));
    expect(gate.recall.of).toBe(100);
    expect(gate.recall.hits).toBeGreaterThanOrEqual(68);
    expect(gate.fpDistress.hits).toBeLessThanOrEqual(2);
    expect(rulesAlone.recall.hits).toBeGreaterThanOrEqual(46);
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
  });
});
