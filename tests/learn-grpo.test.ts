import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { actionKey, type Action } from '../src/core/types.ts';
import { HeuristicPolicy } from '../src/director/heuristic.ts';
import { loadOnnxPolicy } from '../src/director/onnx-policy.ts';
import type { RewardBreakdown } from '../src/eval/group-reward.ts';
import { readDirectorFile } from '../src/learn/director-model.ts';
import { DirectorFeaturizer } from '../src/learn/features.ts';
import { GRPO_DEFAULTS, trainDirector, type GrpoConfig } from '../src/learn/grpo.ts';
import { trainDirectorToFile } from '../src/learn/train-director.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { startStates, type SimStart } from '../src/sim/environment.ts';
import type { Scenario } from '../src/sim/scenario.ts';
import { loadSuite } from '../src/sim/scenario.ts';
import { openDatabase } from '../src/store/db.ts';
import { Store } from '../src/store/store.ts';
import { createRng } from '../src/util/rng.ts';
import { runMain } from './support/cli.ts';

const support = loadPacks().get('support')!;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-grpo-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const suiteFile = path.join(dir, 'tiny.yaml');
fs.writeFileSync(
  suiteFile,
  `suite: tiny
kind: support
pack: support
description: Two short scenarios for trainer tests.
scenarios:
  - id: exam-failed
    valence: negative
    situation: A student failed an important exam and feels ashamed.
    opening: I failed my exam today and I feel so stupid.
    need: To feel heard, then to plan the retake.
    needs: { explore: 0.8, insight: 0.5, action: 0.5 }
    shares: [I studied for weeks and still blanked., My parents are going to be so disappointed.]
    realisations: [Maybe one exam does not define me., I think the panic was the real problem.]
    steps: [book the retake date, ask my tutor about exam panic]
    whenRushed: I don't want a study plan right now, I just feel awful.
  - id: promotion
    valence: positive
    situation: Someone got promoted and feels nervous about leading.
    opening: I got the promotion! But now I have to lead my old teammates.
    need: To share the joy and think about leading friends.
    needs: { explore: 0.4, insight: 0.7, action: 0.6 }
    shares: [It still feels unreal., Two of them wanted the job too.]
    realisations: [Being fair matters more than being liked., They chose me for a reason.]
    steps: [have one-on-ones with each teammate, ask my manager for a mentor]
    whenRushed: Let me enjoy it for a second first.
`,
);
const scenarios: Scenario[] = loadSuite(suiteFile).scenarios;

const tiny: GrpoConfig = { ...GRPO_DEFAULTS, buckets: 1 << 10, emb: 4, hidden: 8, groupSize: 4, batchStates: 6, iterations: 2, distillEpochs: 1, blockTurns: 3 };

describe('GRPO trainer', () => {
  it('increases the probability of the action a known reward prefers', async () => {
    const starts: SimStart[] = await startStates(support, scenarios, [1], { maxRounds: 3 });
    const featurizer = new DirectorFeaturizer(support, 1 << 10);
    const target = 'yield';
    const fakeReward = async (_s: SimStart, a: Action) => ({ reward: actionKey(a) === target ? 1 : 0, breakdown: {} as RewardBreakdown, turns: [], engagement: 0 });
    const mean = (net: { forward: (f: ReturnType<DirectorFeaturizer['extract']>) => { probabilities: number[] } }) =>
      starts.reduce((s, st) => s + net.forward(featurizer.extract(st.state)).probabilities[featurizer.slots.indexOf(target)]!, 0) / starts.length;

    const config = { ...tiny, iterations: 25, lr: 0.01, beta: 0.01, distillEpochs: 2 };
    const result = await trainDirector({ featurizer, starts: starts.map((start) => ({ start })), config, teacher: new HeuristicPolicy(), rollout: fakeReward });
    const before = mean(result.reference);
    const after = mean(result.net);
    expect(after).toBeGreaterThan(before + 0.2);
    expect(result.history).toHaveLength(25);
    expect(result.history.at(-1)!.kl).toBeGreaterThan(0);
    // The reward of sampled actions rises with the policy.
    expect(result.history.at(-1)!.reward).toBeGreaterThan(result.history[0]!.reward);
  });

  it('mixes human feedback into the logged action reward', async () => {
    const starts: SimStart[] = (await startStates(support, scenarios, [1], { maxRounds: 2 })).slice(0, 4);
    const featurizer = new DirectorFeaturizer(support, 1 << 10);
    const liked = featurizer.slots.indexOf('yield');
    const flat = async () => ({ reward: 0.5, breakdown: {} as RewardBreakdown, turns: [], engagement: 0 });
    const result = await trainDirector({
      featurizer,
      starts: starts.map((start) => ({ start, feedback: { action: liked, value: 1 } })),
      config: { ...tiny, iterations: 15, lr: 0.01, beta: 0, feedbackWeight: 1 },
      teacher: new HeuristicPolicy(),
      rollout: flat,
    });
    const p = (net: typeof result.net) => net.forward(featurizer.extract(starts[0]!.state)).probabilities[liked]!;
    expect(p(result.net)).toBeGreaterThan(p(result.reference));
    // Without feedback every group is flat: no signal at all.
    const none = await trainDirector({ featurizer, starts: starts.map((start) => ({ start })), config: { ...tiny, iterations: 2, beta: 0 }, teacher: new HeuristicPolicy(), rollout: flat });
    expect(none.history.every((h) => h.signal === 0)).toBe(true);
  });

  it('trains in simulation and writes a loadable director, its report, curves and checkpoints', async () => {
    const db = openDatabase(path.join(dir, 'log.db'));
    const store = new Store(db);
    // One logged decision, with a rating on its round, joins the simulated starts.
    const policy = new HeuristicPolicy();
    const state = (await startStates(support, scenarios, [2], { maxRounds: 1 }))[0]!.state;
    const decision = await policy.decide(state, createRng(1));
    const { summarizeState } = await import('../src/session/engine.ts');
    store.logDecision({ channelKey: 'console:x', roundId: 'r1', triggerId: 'm1', turnIndex: 0, pack: 'support', state: summarizeState(state), decision, at: 1 });
    store.addFeedback({ channelKey: 'console:x', roundId: 'r1', userId: 'u1', kind: 'rating', value: 5, at: 2 });

    const out = path.join(dir, 'models', 'support-director.onnx');
    const events: string[] = [];
    const report = await trainDirectorToFile({
      pack: support,
      suiteName: 'tiny',
      scenarios,
      seeds: [101],
      db,
      config: tiny,
      teacher: policy,
      out,
      version: 'support-test-1',
      checkpointDir: path.join(dir, 'ckpt'),
      checkpointEvery: 1,
      progress: (e) => events.push(e.kind),
    });
    db.close();
    expect(report.starts.logged).toBe(1);
    expect(report.starts.loggedWithFeedback).toBe(1);
    expect(report.starts.simulated).toBeGreaterThan(5);
    expect(report.history).toHaveLength(2);
    expect(report.statesPerSecond).toBeGreaterThan(0);
    expect(events).toEqual(['starts', 'distill', 'iteration', 'checkpoint', 'iteration']);

    const { info } = readDirectorFile(out);
    expect(info.policyVersion).toBe('support-test-1');
    expect(info.training).toMatchObject({ algorithm: 'grpo', suite: 'tiny', seeds: [101] });
    const served = await loadOnnxPolicy(out, support);
    const d = await served.decide(state, createRng(3));
    expect(d.policyVersion).toBe('support-test-1');
    await served.close();

    expect(fs.readFileSync(report.files.chart, 'utf8')).toMatch(/^<svg[\s\S]*KL to reference[\s\S]*<\/svg>\n$/);
    expect(fs.readFileSync(report.files.summary, 'utf8')).toContain('| iteration | reward | KL |');
    expect(JSON.parse(fs.readFileSync(report.files.report, 'utf8')).history).toHaveLength(2);
    expect(fs.existsSync(path.join(dir, 'ckpt', 'support-test-1', 'iteration-0001.onnx'))).toBe(true);
    expect(readDirectorFile(path.join(dir, 'ckpt', 'support-test-1', 'iteration-0001.onnx')).info.policyVersion).toBe('support-test-1-it1');
  });
});

describe('mascot train director', () => {
  const run = (...argv: string[]) => runMain(argv, { ...process.env, MASCOT_DB: path.join(dir, 'none.db'), MASCOT_LOG_LEVEL: 'silent' });

  it('trains a tiny director from the command line', async () => {
    const out = path.join(dir, 'cli', 'd.onnx');
    const r = await run('train', 'director', '--pack', 'support', '--suite', suiteFile, '--out', out, '--seeds', '101', '--every', '3', '--iterations', '2', '--batch-states', '3', '--group-size', '2', '--block-turns', '2', '--buckets', '1024', '--emb', '4', '--hidden', '8', '--distill-epochs', '1', '--fidelity', 'check', '--no-logged', '--version', 'support-cli-1', '--checkpoint-dir', path.join(dir, 'cli-ckpt'));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/wrote .*d\.onnx \(director support-cli-1 for pack support\)/);
    expect(r.err).toMatch(/start states: \d+ simulated, 0 logged/);
    expect(r.err).toMatch(/2\/2 {2}reward [\d.]+ {2}KL/);
    expect(readDirectorFile(out).info.training).toMatchObject({ config: { groupSize: 2, iterations: 2 } });
  });

  it('names a bad hyperparameter', async () => {
    const r = await run('train', 'director', '--out', path.join(dir, 'x.onnx'), '--group-size', '1');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--group-size must be at least 2/);
    const s = await run('train', 'director', '--out', path.join(dir, 'x.onnx'), '--seeds', '5-1');
    expect(s.err).toMatch(/--seeds: "5-1" is not an increasing range/);
    const b = await run('train', 'director', '--out', path.join(dir, 'x.onnx'), '--buckets', '1000');
    expect(b.err).toMatch(/--buckets must be a power of two/);
  });
});
