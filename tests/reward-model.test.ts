import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectorNetwork } from '../src/learn/network.ts';
import { encodeModel, initializer, node, saveModel, valueInfo } from '../src/learn/onnx.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { BudgetedGenerator, RewardModels } from '../src/reward/best-of-n.ts';
import { DENSE_NAMES, RewardFeaturizer } from '../src/reward/features.ts';
import { decodeRewardNetwork, encodeRewardModel, PersonaRewardModel, readRewardInfo } from '../src/reward/model.ts';
import { examplePreferences } from '../src/reward/preferences.ts';
import { idLossAndGrad, pairLossAndGrad, trainRewardModel } from '../src/reward/train.ts';
import type { GenerationRequest, Generator } from '../src/speaker/generator.ts';
import { Speaker } from '../src/speaker/speaker.ts';
import { createRng } from '../src/util/rng.ts';
import { tempDir } from './support/core.ts';

const pack = loadPacks().get('support')!;
const featurizer = new RewardFeaturizer(64);
const ctx = [{ name: 'Sam', text: 'I moved abroad and feel so alone since my husband travels for work.', isBot: false }];

describe('persona reward model', () => {
  it('has analytic gradients that match finite differences (pair and identification losses)', () => {
    const net = DirectorNetwork.initialized({ buckets: 64, emb: 4, dense: DENSE_NAMES.length, hidden: 5, actions: 4 }, createRng(7));
    const mask = [true, true, true, true];
    const w = featurizer.features(ctx, 'It sounds lonely, being so far from home with him away.');
    const l = featurizer.features(ctx, 'One step: join a language class this week.');
    const loss = () => {
      const probe = net.clone();
      // Each function returns the unscaled loss and accumulates scale * its gradient.
      return pairLossAndGrad(probe, 1, w, l, mask, 1) + 0.5 * idLossAndGrad(probe, 2, w, mask, 0.5);
    };
    for (const p of net.params) p.grad.fill(0);
    pairLossAndGrad(net, 1, w, l, mask, 1);
    idLossAndGrad(net, 2, w, mask, 0.5);
    const rng = createRng(3);
    let checked = 0;
    for (const p of net.params) {
      const indices = p.name === 'E' ? [...new Set([...w.ids, ...l.ids])].slice(0, 3).map((row) => row * 4 + 1) : Array.from({ length: 4 }, () => Math.floor(rng.next() * p.value.length));
      for (const i of indices) {
        const eps = 1e-5;
        const old = p.value[i]!;
        p.value[i] = old + eps;
        const up = loss();
        p.value[i] = old - eps;
        const down = loss();
        p.value[i] = old;
        const numeric = (up - down) / (2 * eps);
        expect(Math.abs(numeric - p.grad[i]!), `${p.name}[${i}]`).toBeLessThan(1e-6 + 1e-4 * Math.abs(numeric));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('learns the example bootstrap and matches onnxruntime on the exported file', async () => {
    const { pairs, authored } = examplePreferences(pack);
    const trained = trainRewardModel({ pack, pairs, authored, options: { buckets: 1024, epochs: 8, heldOut: 0.25 } });
    expect(trained.report.pairwise.train.accuracy).toBeGreaterThan(0.9);
    expect(trained.report.pairs.heldOut).toBeGreaterThan(0);
    expect(trained.report.identification.chance).toBe(0.25);

    const file = path.join(tempDir('mascot-reward-'), 'reward.onnx');
    saveModel(file, encodeRewardModel(trained.net, trained.info));
    const info = readRewardInfo(fs.readFileSync(file), file);
    expect(info.pack).toBe('support');
    expect(info.personas).toEqual(['anchor', 'beacon', 'catalyst', 'guide']);
    expect((info.training as { pairwise: unknown }).pairwise).toBeDefined();

    const model = await PersonaRewardModel.load(file);
    const texts = [...pack.personas.flatMap((p) => p.examples.map((e) => e.response)), 'ok', 'x'.repeat(3000)];
    const scores = await model.scoreTurns(texts.map((text) => ({ context: ctx, text })));
    const { net } = decodeRewardNetwork(fs.readFileSync(file), file);
    const fz = new RewardFeaturizer(info.shape.buckets);
    let maxDiff = 0;
    texts.forEach((text, i) => {
      const logits = net.forward({ ...fz.features(ctx, text), mask: [true, true, true, true] }).logits;
      logits.forEach((r, p) => (maxDiff = Math.max(maxDiff, Math.abs(r - scores[i]!.reward[p]!))));
      const probs = scores[i]!.personaProb;
      expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
      scores[i]!.fidelity.forEach((f, p) => expect(f).toBeCloseTo(1 / (1 + Math.exp(-(scores[i]!.reward[p]! - info.midpoints[p]!))), 5));
    });
    expect(maxDiff).toBeLessThan(1e-4);
    // Trained on their own examples, each persona's examples are identified as its own.
    const anchorExample = pack.personas.find((p) => p.id === 'anchor')!.examples[0]!.response;
    const [s] = await model.scoreTurns([{ context: ctx, text: anchorExample }]);
    expect(s!.personaProb[model.head('anchor')]).toBe(Math.max(...s!.personaProb));
    await model.release();
  });

  it('refuses files that are not persona reward models, naming the file and the problem', () => {
    const dir = tempDir('mascot-reward-bad-');
    const garbage = path.join(dir, 'garbage.onnx');
    fs.writeFileSync(garbage, 'not a model at all');
    expect(() => new RewardModels([garbage])).toThrow(/garbage\.onnx: not an ONNX model/);
    const other = path.join(dir, 'other.onnx');
    saveModel(other, encodeModel({ graphName: 'g', nodes: [node('Identity', ['x'], ['y'])], initializers: [initializer('unused', [1], [0])], inputs: [valueInfo('x', 'float', [1])], outputs: [valueInfo('y', 'float', [1])], metadata: { 'mascot.kind': 'mascot-director' } }));
    expect(() => new RewardModels([other])).toThrow(/other\.onnx: not a MASCOT persona reward model \(metadata mascot\.kind is "mascot-director"\)/);
    expect(() => new RewardModels([path.join(dir, 'missing.onnx')])).toThrow(/cannot read .*missing\.onnx \(ENOENT\)/);
  });

  it('ships models for both packs that rank each persona\'s own example above the others\'', async () => {
    const models = new RewardModels([path.resolve('models/persona-reward-support.onnx'), path.resolve('models/persona-reward-meeting.onnx')]);
    expect(models.packs.sort()).toEqual(['meeting', 'support']);
    const ranker = models.ranker();
    let wins = 0;
    let total = 0;
    for (const persona of pack.personas) {
      const own = persona.examples[0]!;
      const others = pack.personas.filter((p) => p.id !== persona.id).map((p) => p.examples[0]!.response);
      const scores = await ranker(persona, [{ messageId: 'h', author: { id: 'u', name: 'Sam', isBot: false }, text: own.context, at: 0 }], [own.response, ...others]);
      wins += scores.slice(1).filter((s) => scores[0]! > s).length;
      total += others.length;
    }
    expect(wins / total).toBeGreaterThanOrEqual(0.85);
    await models.close();
  });
});

describe('best-of-N at serve time', () => {
  /** A generator whose n-candidate requests answer after `extraDelay` ms, the single one at once. */
  class TimedGenerator implements Generator {
    readonly name = 'timed';
    readonly requests: GenerationRequest[] = [];
    constructor(private readonly extraDelay: number) {}
    async generate(req: GenerationRequest) {
      this.requests.push(req);
      const n = req.n ?? 1;
      if (n > 1 || this.requests.length % 2 === 0) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, this.extraDelay);
          req.signal?.addEventListener('abort', () => (clearTimeout(t), reject(req.signal!.reason)), { once: true });
        });
      }
      const texts = n > 1 ? ['You should just try harder.', 'It sounds lonely, being so far from home with him away so much.'].slice(0, n) : ['Ok.'];
      return { texts, offline: false, model: 'timed' };
    }
  }

  const persona = pack.personas.find((p) => p.id === 'anchor')!;
  const request = {
    pack,
    persona,
    personas: pack.personas,
    directive: { personaId: 'anchor', strategy: 'reflection', instruction: 'Reflect the feeling.' },
    transcript: [{ messageId: 'h', author: { id: 'u', name: 'Sam', isBot: false }, text: ctx[0]!.text, at: 0 }],
    sessionKey: 's',
  };

  it('posts the candidate the reward model prefers when all arrive within the budget', async () => {
    const models = new RewardModels([path.resolve('models/persona-reward-support.onnx')]);
    const gen = new TimedGenerator(5);
    const speaker = new Speaker(new BudgetedGenerator(gen, 2000), { candidates: 3, ranker: models.ranker() });
    const spoken = await speaker.speak(request);
    expect(gen.requests.map((r) => r.n)).toEqual([1, 2]);
    expect(spoken.text).toBe('It sounds lonely, being so far from home with him away so much.');
    await models.close();
  });

  it('keeps the first candidate when the others miss the latency budget, and aborts them', async () => {
    const gen = new TimedGenerator(10_000);
    const budgeted = new BudgetedGenerator(gen, 50);
    const started = Date.now();
    const out = await budgeted.generate({ ...request, personaId: 'anchor', strategy: 'reflection', messages: [], temperature: 0.7, maxTokens: 50, n: 3, context: { sessionKey: 's', humanName: 'Sam', lastHumanText: '', recentBotTexts: [] } });
    expect(out.texts).toEqual(['Ok.']);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(gen.requests[1]!.signal!.aborted).toBe(true);
  });
});
