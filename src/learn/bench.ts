// `npm run bench` section "learned director": decision latency of the ONNX director (features +
// onnxruntime inference, one intra-op thread), split into its parts, next to the heuristic; and
// GRPO training throughput in start states per second (rollouts included).
import fs from 'node:fs';
import type { Turn } from '../core/types.ts';
import { HeuristicPolicy } from '../director/heuristic.ts';
import { builtinModelFile } from '../director/learned.ts';
import { LocalInference, policyFromBytes } from '../director/onnx-policy.ts';
import type { DirectorState } from '../director/policy.ts';
import { timeEach } from '../bench/measure.ts';
import type { BenchSection } from '../bench/section.ts';
import { loadPacks } from '../persona/loader.ts';
import { startStates } from '../sim/environment.ts';
import { loadSuite } from '../sim/scenario.ts';
import { createRng } from '../util/rng.ts';
import { encodeDirector, readDirectorInfo } from './director-model.ts';
import { DirectorFeaturizer } from './features.ts';
import { GRPO_DEFAULTS, trainDirector } from './grpo.ts';
import { DirectorNetwork } from './network.ts';

const MESSAGES = [
  'I moved abroad and feel so alone since my husband travels for work, and the weekends are the worst part of it',
  'My manager criticised my report in front of everyone and I cannot stop thinking about it',
  'What should I do about my landlord ignoring the broken heating?',
  'thanks, that actually helps a bit',
  'I failed my driving test for the third time and I feel stupid',
  'Anchor, do you think I am overreacting about my sister not calling on my birthday?',
];

function benchStates(): DirectorState[] {
  const pack = loadPacks().get('support')!;
  return MESSAGES.map((text, i) => {
    const before: Turn = { messageId: `b${i}`, author: { id: 'anchor', name: 'Anchor', isBot: true, personaId: 'anchor' }, text: 'It sounds like a lot has been weighing on you this week.', at: 0, strategy: 'reflection' };
    const human: Turn = { messageId: `h${i}`, author: { id: 'u', name: 'Sam', isBot: false }, text, at: 1 };
    return { pack, personas: pack.personas, transcript: [before, human], human, roundTurns: [], sessionStrategies: ['reflection', 'question'], humanTurnCount: 3, mentions: i === 5 ? ['anchor'] : [], maxBotTurns: 2, floor: 0.005 };
  });
}

const us = (v: number) => `${v.toFixed(1)} us`;

export const learnBench: BenchSection = {
  name: 'learned director',
  async run({ quick }) {
    const states = benchStates();
    const pack = states[0]!.pack;
    // The shipped director when there is one, else a fresh network of the default size.
    const shipped = builtinModelFile(pack.id);
    let bytes: Uint8Array;
    let source: string;
    if (fs.existsSync(shipped)) {
      bytes = fs.readFileSync(shipped);
      source = shipped;
    } else {
      const f = new DirectorFeaturizer(pack, GRPO_DEFAULTS.buckets);
      const net = DirectorNetwork.initialized({ buckets: f.buckets, emb: GRPO_DEFAULTS.emb, dense: f.denseNames.length, hidden: GRPO_DEFAULTS.hidden, actions: f.slots.length }, createRng(1));
      bytes = encodeDirector(net, { pack: pack.id, layout: f.layout, shape: net.shape, policyVersion: 'bench', training: {} });
      source = 'an untrained network of the default size';
    }
    const info = readDirectorInfo(bytes, source);
    const policy = await policyFromBytes(bytes, info, source, pack);
    const inference = await LocalInference.open(bytes, source);
    const featurizer = new DirectorFeaturizer(pack, info.layout.buckets);
    const heuristic = new HeuristicPolicy();
    const rng = createRng(1);
    const n = quick ? 300 : 20_000;
    const extracted = states.map((s) => featurizer.extract(s));

    const onnx = await timeEach(n, (i) => policy.decide(states[i % states.length]!, rng));
    const features = await timeEach(n, (i) => featurizer.extract(states[i % states.length]!));
    const run = await timeEach(n, (i) => inference.run(extracted[i % extracted.length]!));
    const heur = await timeEach(n, (i) => heuristic.decide(states[i % states.length]!, rng));
    await policy.close();
    await inference.close();

    // Training throughput: a short GRPO run on the support suite (offline voice and simulated person).
    const suite = loadSuite('support');
    const scenarios = quick ? suite.scenarios.slice(0, 4) : suite.scenarios.slice(0, 24);
    const starts = await startStates(pack, scenarios, [101], { every: 2 });
    const tf = new DirectorFeaturizer(pack, quick ? 1 << 10 : GRPO_DEFAULTS.buckets);
    const iterations = quick ? 2 : 5;
    const result = await trainDirector({
      featurizer: tf,
      starts: starts.map((start) => ({ start })),
      config: { ...GRPO_DEFAULTS, buckets: tf.buckets, iterations, batchStates: quick ? 4 : GRPO_DEFAULTS.batchStates, distillEpochs: 1 },
      teacher: heuristic,
    });
    const states_ = result.history.reduce((a, h) => a + h.states, 0);
    const seconds = result.history.reduce((a, h) => a + h.seconds, 0);
    const rollouts = result.history.reduce((a, h) => a + h.rollouts, 0);

    return [
      { metric: 'model', value: `${info.policyVersion} (${source}), ${info.shape.buckets} x ${info.shape.emb} embedding, hidden ${info.shape.hidden}, ${info.shape.actions} actions` },
      { metric: 'onnx director decision (features + inference + floor + sampling)', value: `median ${us(onnx.medianUs)}, p99 ${us(onnx.p99Us)} (n=${onnx.n})` },
      { metric: '  feature extraction', value: `median ${us(features.medianUs)}, p99 ${us(features.p99Us)}` },
      { metric: '  onnxruntime inference (1 intra-op thread)', value: `median ${us(run.medianUs)}, p99 ${us(run.p99Us)}` },
      { metric: 'heuristic decision', value: `median ${us(heur.medianUs)}, p99 ${us(heur.p99Us)}` },
      { metric: 'GRPO training throughput', value: `${(states_ / seconds).toFixed(1)} states/s (G=${GRPO_DEFAULTS.groupSize}, ${rollouts} rollouts of ${GRPO_DEFAULTS.blockTurns}+ turns in ${seconds.toFixed(1)} s)` },
    ];
  },
};
