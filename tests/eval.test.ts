import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { loadConfig } from '../src/config.ts';
import { actionSpace } from '../src/director/actions.ts';
import type { DirectorState, Policy } from '../src/director/policy.ts';
import { GENERIC_VOICE_ID, genericVoices, RandomOrderPolicy } from '../src/eval/ablations.ts';
import { DEFAULT_REWARD_WEIGHTS } from '../src/eval/group-reward.ts';
import { PolicyNameError, registerPolicyResolver, resolvePolicy } from '../src/eval/policies.ts';
import { summarize, writeReport } from '../src/eval/report.ts';
import { runEvaluation, type EvalPlan } from '../src/eval/runner.ts';
import { interval, t975 } from '../src/eval/stats.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { loadProfiles, loadSuite, ScenarioFileError } from '../src/sim/scenario.ts';
import { createRng } from '../src/util/rng.ts';

const packs = loadPacks();
const support = packs.get('support')!;
const profiles = loadProfiles();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-eval-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** One scenario per split of each suite: small enough for a test, every split present. */
function smallSuites() {
  return ['support', 'meeting'].map((name) => {
    const suite = loadSuite(name);
    return { ...suite, scenarios: suite.splits.flatMap((split) => suite.scenarios.filter((s) => (s.kind === 'support' ? s.valence : s.type) === split).slice(0, 1)) };
  });
}

const plan = (seeds: number[]): EvalPlan => ({
  suites: smallSuites(),
  packs,
  policies: ['random', 'round-robin', 'heuristic'],
  ablations: ['no-persona', 'random-order'],
  seeds,
  profiles,
  weights: { ...DEFAULT_REWARD_WEIGHTS },
  config: loadConfig({}),
  maxRounds: 6,
});

function readAll(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

describe('mascot eval', async () => {
  const results = await runEvaluation(plan([1]));

  it('writes the same report bit for bit from the same seeds, and another from other seeds', async () => {
    const a = writeReport(path.join(tmp, 'a'), results);
    const b = writeReport(path.join(tmp, 'b'), await runEvaluation(plan([1])));
    const c = writeReport(path.join(tmp, 'c'), await runEvaluation(plan([2])));
    const filesA = readAll(path.join(tmp, 'a'));
    expect(Object.keys(filesA).sort()).toEqual(
      ['conversations.jsonl', 'report.md', 'results.json', ...['positive', 'negative', 'neutral'].map((s) => `charts/support-${s}.svg`), ...['academic', 'committee', 'product'].map((s) => `charts/meeting-${s}.svg`)].sort(),
    );
    expect(readAll(path.join(tmp, 'b'))).toEqual(filesA);
    expect(readAll(path.join(tmp, 'c'))['results.json']).not.toBe(filesA['results.json']);
    expect(a.files).toHaveLength(b.files.length);
    expect(c.markdown).not.toBe(a.markdown);
  });

  it('reports every split of every suite with each system, intervals and the best value in bold', () => {
    expect(results.systems).toEqual(['random', 'round-robin', 'heuristic', 'heuristic (no-persona)', 'heuristic (random-order)']);
    // 2 suites x 3 splits x 1 scenario x 5 systems, one seed.
    expect(results.conversations).toHaveLength(30);
    const summaries = summarize(results);
    expect(summaries.map((s) => `${s.suite}/${s.split}`)).toEqual(['support/positive', 'support/negative', 'support/neutral', 'support/all', 'meeting/academic', 'meeting/committee', 'meeting/product', 'meeting/all']);
    const { markdown } = writeReport(path.join(tmp, 'shape'), results);
    expect(markdown).toContain('## support / negative (1 conversation per system)');
    expect(markdown).toContain('## support / all (3 conversations per system)');
    expect(markdown).toMatch(/\| heuristic \(random-order\) \| -?\d+\.\d ± \d+\.\d/);
    expect(markdown).toMatch(/\*\*\d+\.\d ± \d+\.\d\*\*/);
    expect(markdown).toContain('offline voice');
    const svg = fs.readFileSync(path.join(tmp, 'shape', 'charts', 'support-negative.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="[\d.]+" fill="#/g)!.length).toBeGreaterThanOrEqual(5 * 8);
    const json = JSON.parse(fs.readFileSync(path.join(tmp, 'shape', 'results.json'), 'utf8'));
    expect(json.conversations).toHaveLength(30);
    expect(json.conversations[0].metrics).toHaveProperty('overall');
    // The metrics are the group reward: the overall score lies within its bounds.
    for (const c of results.conversations) {
      expect(c.metrics.overall!).toBeGreaterThanOrEqual(-100 * DEFAULT_REWARD_WEIGHTS.overTalk);
      expect(c.metrics.overall!).toBeLessThanOrEqual(100);
      expect(c.transcript.length).toBeGreaterThan(1);
    }
  });

  it('runs from the command line, shows progress and prints the table', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { stdout: { write: (s: string) => out.push(s) } as unknown as NodeJS.WritableStream, stderr: { write: (s: string) => err.push(s) } as unknown as NodeJS.WritableStream, env: {} };
    const dir = path.join(tmp, 'cli');
    const code = await main(['eval', '--suite', 'meeting', '--policies', 'random,heuristic', '--seeds', '1', '--limit', '1', '--ablations', 'none', '--out', dir, '--max-rounds', '4'], io);
    expect(err.join('')).toContain('[eval] 6/6 conversations (100%)');
    expect(code).toBe(0);
    expect(out.join('')).toContain('## meeting / academic (1 conversation per system)');
    expect(fs.existsSync(path.join(dir, 'report.md'))).toBe(true);
  });

  it('rejects wrong options with a message naming them', async () => {
    const err: string[] = [];
    const io = { stdout: { write: () => true } as unknown as NodeJS.WritableStream, stderr: { write: (s: string) => err.push(s) } as unknown as NodeJS.WritableStream, env: {} };
    expect(await main(['eval', '--ablations', 'no-mind'], io)).toBe(2);
    expect(err.join('')).toContain('--ablations: "no-mind" is not one of no-persona, random-order, none');
    expect(await main(['eval', '--seeds', 'many'], io)).toBe(2);
    expect(await main(['eval', '--suite', 'meeting', '--policies', 'oracle', '--limit', '1', '--out', path.join(tmp, 'x')], io)).toBe(1);
    expect(err.join('')).toMatch(/unknown policy "oracle" \(known: heuristic, round-robin, random, onnx:<file>, llm/);
    expect(await main(['eval', '--judge', 'llm'], io)).toBe(2);
    expect(err.join('')).toContain('--judge llm needs MASCOT_JUDGE_BASE_URL');
  });
});

describe('suite files', () => {
  const scenario = loadSuite('support').scenarios[0]!;

  it('accepts JSONL from any path, with a header line', () => {
    const file = path.join(tmp, 'mine.jsonl');
    fs.writeFileSync(file, [JSON.stringify({ suite: 'mine', kind: 'support' }), JSON.stringify({ ...scenario, id: 'a' }), JSON.stringify({ ...scenario, id: 'b', valence: 'negative' })].join('\n'));
    const suite = loadSuite(file);
    expect(suite.name).toBe('mine');
    expect(suite.pack).toBe('support');
    expect(suite.scenarios.map((s) => s.id)).toEqual(['a', 'b']);
    expect(suite.splits).toEqual(['positive', 'negative']);
  });

  it('names the file, the line and the field of every problem, and keeps looking', () => {
    const file = path.join(tmp, 'bad.jsonl');
    const { opening: _opening, ...noOpening } = scenario as typeof scenario & { opening: string };
    fs.writeFileSync(file, [JSON.stringify({ ...scenario, id: 'ok', kind: 'support' }), '{not json', JSON.stringify({ ...noOpening, id: 'x', kind: 'support' }), JSON.stringify({ ...scenario, id: 'ok', kind: 'support', needs: { explore: 2, insight: 0, action: 0 } })].join('\n'));
    let problems: string[] = [];
    try {
      loadSuite(file);
    } catch (err) {
      expect(err).toBeInstanceOf(ScenarioFileError);
      problems = (err as ScenarioFileError).problems;
    }
    expect(problems).toEqual([
      expect.stringMatching(/bad\.jsonl:2: not JSON/),
      expect.stringMatching(/bad\.jsonl:3 \(x\): opening: /),
      expect.stringMatching(/bad\.jsonl:4 \(ok\): needs\.explore: /),
    ]);
    expect(() => loadSuite('no-such-suite')).toThrow(/no-such-suite\.yaml: cannot read \(ENOENT\); built-in suites: meeting, support/);
  });

  it('ships at least 24 support scenarios per valence and 12 meetings per type, and 16 profiles', () => {
    const count = (name: string) => {
      const s = loadSuite(name);
      return Object.fromEntries(s.splits.map((sp) => [sp, s.scenarios.filter((x) => (x.kind === 'support' ? x.valence : x.type) === sp).length]));
    };
    const sup = count('support');
    const meet = count('meeting');
    for (const v of ['positive', 'negative', 'neutral']) expect(sup[v]).toBeGreaterThanOrEqual(24);
    for (const v of ['academic', 'committee', 'product']) expect(meet[v]).toBeGreaterThanOrEqual(12);
    expect(profiles).toHaveLength(16);
    expect(new Set(profiles.map((p) => `${p.verbosity}/${p.turnTolerance}/${p.patience}/${p.rushSensitivity}/${JSON.stringify(p.gains)}`)).size).toBe(16);
  });
});

describe('statistics', () => {
  it('computes the mean and a Student t 95% interval', () => {
    expect(t975(1)).toBe(12.706);
    expect(t975(30)).toBe(2.042);
    expect(t975(60)).toBeCloseTo(2.0003, 3);
    expect(t975(1000)).toBeCloseTo(1.9623, 3);
    const v = interval([1, 2, 3, 4])!;
    expect(v.mean).toBe(2.5);
    // sd = sqrt(5/3), half = 3.182 * sd / 2
    expect(v.half).toBeCloseTo((3.182 * Math.sqrt(5 / 3)) / 2, 12);
    expect(interval([7])).toEqual({ mean: 7, half: 0, n: 1 });
    expect(interval([])).toBeNull();
  });
});

describe('ablations and policy names', () => {
  const human = { messageId: 'h', author: { id: 'u', name: 'Sam', isBot: false }, text: 'I feel so alone since I moved.', at: 0 };
  const state: DirectorState = { pack: support, personas: support.personas, transcript: [human], human, roundTurns: [], sessionStrategies: [], humanTurnCount: 1, mentions: [], maxBotTurns: 2, floor: 0 };
  const slots = actionSpace(support);
  const fixed = (key: string): Policy => ({
    id: 'fixed',
    version: '1',
    decide: (_s, rng) => {
      rng.next();
      const probabilities = slots.map((k) => (k === key ? 1 : 0));
      return { action: { kind: 'yield' }, probabilities, actions: slots, propensity: 1, policyId: 'fixed', policyVersion: '1', reason: '' };
    },
  });

  it('random order keeps when to speak and the kind of help, and draws the speaker uniformly', async () => {
    const order = new RandomOrderPolicy(fixed('anchor:reflection'));
    const d = await order.decide(state, createRng(1));
    const p = Object.fromEntries(d.actions.map((k, i) => [k, d.probabilities[i]!]));
    // Explore-phase slots only: anchor has three, the others none (so any of their strategies).
    expect(p['anchor:reflection']! + p['anchor:restatement']! + p['anchor:reassurance']!).toBeCloseTo(0.25, 12);
    expect(p['catalyst:question']! + p['catalyst:reframing']!).toBeCloseTo(0.25, 12);
    expect(p['guide:suggestion']).toBeCloseTo(0.125, 12);
    expect(p.yield).toBe(0);
    const y = await new RandomOrderPolicy(fixed('yield')).decide(state, createRng(1));
    expect(y.action).toEqual({ kind: 'yield' });
  });

  it('no-persona voices are generic assistants standing in for each persona', () => {
    const voices = genericVoices(support.personas);
    expect(voices.size).toBe(support.personas.length);
    for (const v of voices.values()) {
      expect(v.id).toBe(GENERIC_VOICE_ID);
      expect(v.examples).toEqual([]);
      expect(v.description).not.toContain('Anchor');
    }
  });

  it('resolves built-in names, registered kinds, and explains unknown ones', async () => {
    const ctx = { pack: support, config: loadConfig({}) };
    expect((await resolvePolicy('heuristic', ctx)).id).toBe('heuristic');
    registerPolicyResolver('fixed', (arg) => fixed(arg));
    expect((await resolvePolicy('fixed:yield', ctx)).id).toBe('fixed');
    await expect(resolvePolicy('onnx', ctx)).rejects.toThrow(/policy "onnx" for pack "support": name the director file: onnx:<file>/);
    await expect(resolvePolicy('onnx:/nonexistent/director.onnx', ctx)).rejects.toBeInstanceOf(PolicyNameError);
    await expect(resolvePolicy('llm', ctx)).rejects.toThrow(/needs MASCOT_LLM_BASE_URL/);
  });
});

describe('fidelity from the persona reward model', () => {
  it('scores a persona\'s own kind of turn above another persona\'s and a generic one', async () => {
    const { modelFidelity } = await import('../src/eval/fidelity.ts');
    const fidelity = modelFidelity();
    try {
      expect(fidelity.packs).toContain('support');
      const score = fidelity.scorerFor(support);
      const anchor = support.personas.find((p) => p.id === 'anchor')!;
      const human = { messageId: 'h', author: { id: 'u', name: 'Sam', isBot: false }, text: 'I keep crying over a breakup from months ago. I should be over it by now.', at: 0 };
      const own = await score(anchor, [human], 'There is no deadline for grief, and crying months later does not mean you are doing it wrong.', 'reassurance');
      const guideLike = await score(anchor, [human], 'Here is one practical step: block an hour on Saturday to write a list of three things to try next week.', 'reassurance');
      for (const s of [own, guideLike]) {
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
      }
      expect(own).toBeGreaterThan(guideLike);
    } finally {
      await fidelity.close();
    }
  });
});
