// `npm run bench` section "safety": what the crisis rules, the lexical classifier and the
// injection detector cost per human message (they run on every one, before the director), and the
// gate's quality (rules OR classifier) on the held-out sets, so a slower or worse change shows in
// one place.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { timeEach } from '../bench/measure.ts';
import type { BenchRow, BenchSection } from '../bench/section.ts';
import { loadPacks } from '../persona/loader.ts';
import { CrisisRules } from './classifier.ts';
import { CrisisDetector } from './detector.ts';
import { evaluate, parseLabelledSet } from './evaluation.ts';
import { detectAttempt } from './injection.ts';
import { DEFAULT_LEXICAL_MODEL, LexicalClassifier } from './lexical.ts';

const DATASETS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../datasets/safety');

const us = (t: { medianUs: number; p99Us: number }) => `median ${t.medianUs.toFixed(1)} us, p99 ${t.p99Us.toFixed(1)} us`;

export const safetyBench: BenchSection = {
  name: 'safety',
  async run({ quick }) {
    const rules = new CrisisRules();
    const n = quick ? 200 : 5000;
    const ordinary = ['I moved abroad and feel so alone since my husband travels for work', 'thanks, that helps', 'We need to decide whether to ship the beta on Friday'];
    const crisis = ["I don't want to live anymore", 'My husband hits me when he drinks', 'I keep thinking about jumping off the bridge'];
    const long = `${'I had a long week and the project keeps slipping, my manager keeps asking for updates. '.repeat(45)}`.slice(0, 4000);
    const rows: BenchRow[] = [
      { metric: 'crisis rules, ordinary message', value: us(await timeEach(n, (i) => rules.classify(ordinary[i % ordinary.length]!))) },
      { metric: 'crisis rules, crisis message', value: us(await timeEach(n, (i) => rules.classify(crisis[i % crisis.length]!))) },
      { metric: 'crisis rules, 4000-character message', value: us(await timeEach(quick ? 20 : 500, () => rules.classify(long))) },
    ];
    const lexical = LexicalClassifier.load(DEFAULT_LEXICAL_MODEL);
    rows.push({ metric: 'lexical classifier, ordinary message', value: us(await timeEach(n, (i) => lexical.score(ordinary[i % ordinary.length]!))) });
    rows.push({ metric: 'lexical classifier, 4000-character message', value: us(await timeEach(quick ? 20 : 500, () => lexical.score(long))) });
    const gate = new CrisisDetector({ rules, lexical });
    const others = loadPacks().get('support')!.personas.slice(1);
    rows.push({ metric: 'injection detector, ordinary message', value: us(await timeEach(n, (i) => detectAttempt(ordinary[i % ordinary.length]!, others))) });
    for (const file of fs.readdirSync(DATASETS).filter((f) => f.startsWith('heldout-')).sort()) {
      const set = parseLabelledSet(fs.readFileSync(path.join(DATASETS, file), 'utf8'), file);
      const e = await evaluate(set.examples, (t) => {
        const v = gate.classifyLocally(t);
        return { label: v.label, patterns: [] };
      });
      rows.push({ metric: `${file}: recall / FP distress / FP other`, value: `${e.recall.value.toFixed(3)} (${e.recall.hits}/${e.recall.of}) / ${(100 * e.fpDistress.value).toFixed(1)}% / ${(100 * e.fpOther.value).toFixed(1)}%` });
    }
    return rows;
  },
};
