import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeuristicPolicy } from '../src/director/heuristic.ts';
import { KServeInference } from '../src/director/kserve.ts';
import { LocalInference, policyFromBytes } from '../src/director/onnx-policy.ts';
import { encodeDirector, readDirectorInfo } from '../src/learn/director-model.ts';
import { DirectorFeaturizer } from '../src/learn/features.ts';
import { stateFromLogged } from '../src/learn/logged.ts';
import { DirectorNetwork } from '../src/learn/network.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { createRng } from '../src/util/rng.ts';
import { startFakeKServe, type FakeKServe } from './fake-kserve/server.ts';

const support = loadPacks().get('support')!;
const featurizer = new DirectorFeaturizer(support, 1 << 10);

function director(seed: number, version: string): Uint8Array {
  const net = DirectorNetwork.initialized({ buckets: 1 << 10, emb: 4, dense: featurizer.denseNames.length, hidden: 8, actions: featurizer.slots.length }, createRng(seed));
  for (let i = 0; i < net.W2.value.length; i++) net.W2.value[i] = Math.cos(i * seed) * 0.7;
  return encodeDirector(net, { pack: 'support', layout: featurizer.layout, shape: net.shape, policyVersion: version, training: {} });
}

const state = stateFromLogged(support, {
  human: 'My manager keeps ignoring my ideas in meetings. What should I do?',
  transcript: [{ name: 'Ana', personaId: null, text: 'My manager keeps ignoring my ideas in meetings. What should I do?' }],
  roundTurns: [],
  sessionStrategies: ['reflection', 'question'],
  humanTurnCount: 3,
  personas: support.personas.map((p) => ({ id: p.id, talkativeness: p.talkativeness, strategies: p.strategies })),
  maxBotTurns: 2,
  floor: 0.005,
});

const served = director(3, 'support-served');
const other = director(4, 'support-other');
let server: FakeKServe;
beforeAll(async () => {
  server = await startFakeKServe({ 'mascot-director-support': served });
});
afterAll(() => server.close());

describe('KServe v2 remote director', () => {
  it('checks the server, then decides from its probabilities, identical to in-process onnxruntime', async () => {
    const info = readDirectorInfo(served, 'served.onnx');
    const remote = new KServeInference({ url: server.url, model: 'mascot-director-{pack}', timeoutMs: 2000 }, info);
    await remote.verify(served, featurizer.extract(state));
    expect(server.requests).toContain('GET /v2/models/mascot-director-support/ready');
    expect(server.requests).toContain('GET /v2/models/mascot-director-support');

    const local = await LocalInference.open(served, 'served.onnx');
    const f = featurizer.extract(state);
    const a = await remote.run(f);
    const b = await local.run(f);
    a.forEach((p, i) => expect(Math.abs(p - b[i]!)).toBeLessThan(1e-6));
    await local.close();

    const policy = await policyFromBytes(served, info, 'served.onnx', support, { remote: () => remote });
    const d = await policy.decide(state, createRng(3));
    expect(d.policyId).toBe('onnx');
    expect(d.policyVersion).toBe('support-served');
    expect(server.requests.at(-1)).toBe('POST /v2/models/mascot-director-support/infer');
  });

  it('refuses a server that serves other weights', async () => {
    const info = readDirectorInfo(other, 'other.onnx');
    const remote = new KServeInference({ url: server.url, model: 'mascot-director-support' }, info);
    await expect(remote.verify(other, featurizer.extract(state))).rejects.toThrow(/does not serve this director file \(probe differs by/);
  });

  it('says clearly when the model or server is missing', async () => {
    const info = readDirectorInfo(served, 'served.onnx');
    await expect(new KServeInference({ url: server.url, model: 'nope' }, info).verify(served, featurizer.extract(state))).rejects.toThrow(/KServe model "nope" .* is not ready \(HTTP 404\)/);
    await expect(new KServeInference({ url: 'http://127.0.0.1:9', model: 'm', timeoutMs: 500 }, info).verify(served, featurizer.extract(state))).rejects.toThrow(/is not reachable/);
  });

  it('falls back to the heuristic for a turn when the server fails', async () => {
    const info = readDirectorInfo(served, 'served.onnx');
    const remote = new KServeInference({ url: server.url, model: 'mascot-director-support', timeoutMs: 2000 }, info);
    const reasons: string[] = [];
    const policy = await policyFromBytes(served, info, 'served.onnx', support, { remote: () => remote, fallback: new HeuristicPolicy(), onFallback: (r) => reasons.push(r) });
    server.failWith(503);
    try {
      const d = await policy.decide(state, createRng(3));
      expect(d.policyId).toBe('heuristic');
      expect(reasons[0]).toMatch(/inference failed at KServe model "mascot-director-support".*HTTP 503: injected failure/);
    } finally {
      server.failWith(0);
    }
  });
});
