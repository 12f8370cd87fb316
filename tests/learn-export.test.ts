import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOnnxPolicy, LocalInference } from '../src/director/onnx-policy.ts';
import { decodeDirector, encodeDirector } from '../src/learn/director-model.ts';
import { DirectorFeaturizer, FEATURE_VERSION } from '../src/learn/features.ts';
import { stateFromLogged } from '../src/learn/logged.ts';
import { DirectorNetwork } from '../src/learn/network.ts';
import { encodeModel, initializer, node, saveModel, valueInfo } from '../src/learn/onnx.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { HeuristicPolicy } from '../src/director/heuristic.ts';
import { createRng } from '../src/util/rng.ts';

const packs = loadPacks();
const support = packs.get('support')!;
const meeting = packs.get('meeting')!;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-director-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function state(human: string, extra: Record<string, unknown> = {}) {
  return stateFromLogged(support, {
    human,
    transcript: [
      { name: 'Sam', personaId: null, text: 'My exam went badly.' },
      { name: 'Anchor', personaId: 'anchor', text: 'That sounds disappointing.', strategy: 'reflection' },
      { name: 'Sam', personaId: null, text: human },
    ],
    roundTurns: [],
    sessionStrategies: ['reflection'],
    humanTurnCount: 2,
    mentions: [],
    personas: support.personas.map((p) => ({ id: p.id, talkativeness: p.talkativeness, strategies: p.strategies })),
    maxBotTurns: 2,
    floor: 0.005,
    ...extra,
  });
}

const states = [
  state('I feel so alone and I do not know what to do next. Any advice?'),
  state('thanks', { roundTurns: [{ personaId: 'catalyst', strategy: 'question' }] }),
  state('Guide, what should I read about exam anxiety?', { mentions: ['guide'] }),
  state('日本語 ça va — émojis 🙂 and a very long message '.repeat(20)),
];

function trainedLookingNetwork(featurizer: DirectorFeaturizer, seed: number): DirectorNetwork {
  const net = DirectorNetwork.initialized({ buckets: featurizer.buckets, emb: 8, dense: featurizer.denseNames.length, hidden: 16, actions: featurizer.slots.length }, createRng(seed));
  // Output weights of a trained size, so probabilities are far from uniform.
  for (let i = 0; i < net.W2.value.length; i++) net.W2.value[i] = Math.sin(i * 1.7) * 0.9;
  return net;
}

function writeDirector(file: string, pack = support, buckets = 1 << 12, version = 'test-1'): DirectorNetwork {
  const featurizer = new DirectorFeaturizer(pack, buckets);
  const net = trainedLookingNetwork(featurizer, 5);
  saveModel(file, encodeDirector(net, { pack: pack.id, layout: featurizer.layout, shape: net.shape, policyVersion: version, training: { note: 'test' } }));
  return net;
}

describe('ONNX director export', () => {
  it('onnxruntime matches the TypeScript forward pass (max abs diff < 1e-5)', async () => {
    const file = path.join(dir, 'parity.onnx');
    writeDirector(file);
    // The served weights are float32: compare against the network decoded from the file.
    const { net, info } = decodeDirector(fs.readFileSync(file), file);
    expect(info.policyVersion).toBe('test-1');
    expect(info.layout.version).toBe(FEATURE_VERSION);
    const inference = await LocalInference.open(fs.readFileSync(file), file);
    const featurizer = new DirectorFeaturizer(support, 1 << 12);
    let maxDiff = 0;
    let spread = 0;
    for (const s of states) {
      const f = featurizer.extract(s);
      const ts = net.forward(f).probabilities;
      const onnx = await inference.run(f);
      ts.forEach((p, i) => {
        maxDiff = Math.max(maxDiff, Math.abs(p - onnx[i]!));
        if (!f.mask[i]) expect(onnx[i]).toBe(0);
      });
      spread = Math.max(spread, Math.max(...ts) - Math.min(...ts.filter((_, i) => f.mask[i])));
    }
    expect(maxDiff).toBeLessThan(1e-5);
    expect(spread).toBeGreaterThan(0.05); // not a trivially uniform output
    await inference.close();
  });

  it('round-trips the weights exactly at float32 precision', () => {
    const file = path.join(dir, 'roundtrip.onnx');
    const original = writeDirector(file);
    const { net } = decodeDirector(fs.readFileSync(file), file);
    for (const [i, p] of net.params.entries()) expect(Array.from(p.value)).toEqual(Array.from(Float32Array.from(original.params[i]!.value)));
  });
});

describe('OnnxPolicy', () => {
  it('decides with the floor, the mask and its version', async () => {
    const file = path.join(dir, 'serve.onnx');
    writeDirector(file, support, 1 << 12, 'support-test-7');
    const policy = await loadOnnxPolicy(file, support);
    const s = states[1]!; // catalyst spoke this round: it may not speak again
    const d = await policy.decide(s, createRng(1));
    expect(d.policyId).toBe('onnx');
    expect(d.policyVersion).toBe('support-test-7');
    expect(d.actions).toEqual(policy.featurizer.slots);
    expect(d.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
    d.actions.forEach((key, i) => {
      if (key.startsWith('catalyst:')) expect(d.probabilities[i]).toBe(0);
      else expect(d.probabilities[i]).toBeGreaterThanOrEqual(0.005 - 1e-9);
    });
    expect(d.propensity).toBe(d.probabilities[d.actions.indexOf(d.action.kind === 'yield' ? 'yield' : `${d.action.personaId}:${d.action.strategy}`)]);
    await policy.close();
  });

  it('refuses a model of another pack, another feature version or other action slots, saying why', async () => {
    const file = path.join(dir, 'support.onnx');
    writeDirector(file);
    await expect(loadOnnxPolicy(file, meeting)).rejects.toThrow(/trained for pack "support" and cannot direct pack "meeting"/);

    const featurizer = new DirectorFeaturizer(support, 1 << 12);
    const net = trainedLookingNetwork(featurizer, 1);
    const old = path.join(dir, 'old-features.onnx');
    saveModel(old, encodeDirector(net, { pack: 'support', layout: { ...featurizer.layout, version: 'director-features/0' }, shape: net.shape, policyVersion: 'v0', training: {} }));
    await expect(loadOnnxPolicy(old, support)).rejects.toThrow(/trained with features "director-features\/0" but this build extracts "director-features\/1"/);

    const fewer = { ...support, personas: support.personas.filter((p) => p.id !== 'guide') };
    await expect(loadOnnxPolicy(file, fewer)).rejects.toThrow(/action slots \(10: .*\) differ from the pack's \(8: /);
  });

  it('refuses files that are not directors', async () => {
    const plain = path.join(dir, 'plain.onnx');
    saveModel(plain, encodeModel({ graphName: 'g', nodes: [node('Identity', ['x'], ['y'])], initializers: [initializer('unused', [1], [0])], inputs: [valueInfo('x', 'float', [1])], outputs: [valueInfo('y', 'float', [1])], metadata: {} }));
    await expect(loadOnnxPolicy(plain, support)).rejects.toThrow(/plain.onnx: not a MASCOT director \(metadata mascot.kind is missing\)/);
    await expect(loadOnnxPolicy(path.join(dir, 'missing.onnx'), support)).rejects.toThrow(/missing.onnx: cannot read director model \(ENOENT\)/);
  });

  it('falls back to the heuristic for a turn of another pack, and says so', async () => {
    const file = path.join(dir, 'fallback.onnx');
    writeDirector(file);
    const reasons: string[] = [];
    const policy = await loadOnnxPolicy(file, support, { fallback: new HeuristicPolicy(), onFallback: (r) => reasons.push(r) });
    const meetingState = { ...states[0]!, pack: meeting, personas: meeting.personas };
    const d = await policy.decide(meetingState, createRng(2));
    expect(d.policyId).toBe('heuristic');
    expect(d.reason).toMatch(/onnx director test-1 unavailable: the model serves pack "support"/);
    expect(reasons).toHaveLength(1);
    await policy.close();
  });
});

// A meeting decision point: the chair's question after the skeptic raised a risk.
const meetingState = stateFromLogged(meeting, {
  human: 'So do we ship the beta on Friday or not? Who owns the rollback plan?',
  transcript: [
    { name: 'Dana', personaId: null, text: 'We need to decide on the beta launch date today.' },
    { name: 'Skeptic', personaId: 'skeptic', text: 'What happens if the migration fails on Friday night?', strategy: 'challenge' },
    { name: 'Dana', personaId: null, text: 'So do we ship the beta on Friday or not? Who owns the rollback plan?' },
  ],
  roundTurns: [],
  sessionStrategies: ['challenge'],
  humanTurnCount: 2,
  mentions: [],
  personas: meeting.personas.map((p) => ({ id: p.id, talkativeness: p.talkativeness, strategies: p.strategies })),
  maxBotTurns: 2,
  floor: 0.005,
});

describe.each([
  { pack: support, state: states[0]! },
  { pack: meeting, state: meetingState },
])('the shipped $pack.id director', ({ pack, state }) => {
  it('serves its pack as it is now (retrain it when the personas or their strategies change)', async () => {
    const file = path.resolve(import.meta.dirname, `../models/${pack.id}-director.onnx`);
    const policy = await loadOnnxPolicy(file, pack);
    expect(policy.info.pack).toBe(pack.id);
    expect(policy.info.layout.version).toBe(FEATURE_VERSION);
    expect(policy.info.training).toMatchObject({ algorithm: 'grpo', suite: pack.id });
    const d = await policy.decide(state, createRng(1));
    expect(d.policyId).toBe('onnx');
    expect(d.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
    expect(fs.statSync(file).size).toBeLessThan(5 * 1024 * 1024);
    await policy.close();
  });
});
