// The persona reward model r(persona, context, response) as an ONNX file, and its serving side.
//
// Network (the embedding-bag MLP of src/learn/network.ts, one output head per persona):
//   bag = sum_k w_k E[id_k];  h = relu(W1 [bag; dense] + b1);  r = W2 h + b2      r[p] = reward of persona p
// Training adds a shared head s (general turn quality) to every persona head, r[p] = head_p + head_s;
// the file stores the folded heads, so the graph is the plain network:
//   rows = Gather(E, ids); bag = ReduceSum(rows * weights[..., None], 1); x = Concat(bag, dense)
//   reward       = Gemm(Relu(Gemm(x, W1^T) + b1), W2^T) + b2        [batch, personas]
//   persona_prob = Softmax(reward)                                   which persona wrote it
//   fidelity     = Sigmoid(reward - midpoint)                        [0, 1], see calibration below
// Calibration: midpoint[p] is the mean of (r_chosen + r_rejected) / 2 over persona p's training
// pairs, so fidelity = P(this turn beats a typical turn at the chosen/rejected boundary) under
// Bradley-Terry. Metadata names the pack, personas, feature version and layout, and training report.
import fs from 'node:fs';
import { z } from 'zod';
import { DirectorNetwork, type NetworkShape } from '../learn/network.ts';
import { createSession, decodeModel, encodeModel, initializer, loadInitializers, node, OnnxModelError, ort, readInitializer, valueInfo, type ExecutionProvider } from '../learn/onnx.ts';
import { DENSE_NAMES, REWARD_FEATURE_VERSION, RewardFeaturizer, type RewardFeatures } from './features.ts';
import type { ContextTurn } from './rubric.ts';

export const REWARD_KIND = 'mascot-persona-reward';

export interface RewardModelInfo {
  pack: string;
  /** Persona ids in head order. */
  personas: string[];
  featureVersion: string;
  denseNames: string[];
  shape: NetworkShape;
  /** Per persona: the reward midpoint between chosen and rejected training turns. */
  midpoints: number[];
  /** A name for this trained model, e.g. "support-2026-03-01-1a2b3c". */
  version: string;
  /** The training report (accuracies, data sources, settings). */
  training: Record<string, unknown>;
}

/** Fold the shared head into each persona head: a training network (P + 1 heads) -> served network (P). */
export function foldSharedHead(net: DirectorNetwork): DirectorNetwork {
  const { hidden, actions } = net.shape;
  const personas = actions - 1;
  const folded = new DirectorNetwork({ ...net.shape, actions: personas });
  folded.E.value.set(net.E.value);
  folded.W1.value.set(net.W1.value);
  folded.b1.value.set(net.b1.value);
  const W2 = net.W2.value;
  const shared = personas * hidden;
  for (let p = 0; p < personas; p++) {
    for (let o = 0; o < hidden; o++) folded.W2.value[p * hidden + o] = W2[p * hidden + o]! + W2[shared + o]!;
    folded.b2.value[p] = net.b2.value[p]! + net.b2.value[personas]!;
  }
  return folded;
}

export function encodeRewardModel(net: DirectorNetwork, info: RewardModelInfo): Uint8Array {
  const { emb, dense, hidden, actions, buckets } = net.shape;
  if (info.personas.length !== actions) throw new Error(`${info.personas.length} personas but the network has ${actions} heads`);
  if (info.midpoints.length !== actions) throw new Error(`${info.midpoints.length} midpoints for ${actions} personas`);
  return encodeModel({
    graphName: `persona_reward_${info.pack}`,
    docString: `MASCOT persona reward model for pack "${info.pack}": hashed features of a turn in its context -> one reward per persona.`,
    nodes: [
      node('Gather', ['E', 'ids'], ['rows'], { axis: 0 }),
      node('Unsqueeze', ['weights', 'axis2'], ['weights3']),
      node('Mul', ['rows', 'weights3'], ['weighted']),
      node('ReduceSum', ['weighted', 'axis1'], ['bag'], { keepdims: 0 }),
      node('Concat', ['bag', 'dense'], ['x'], { axis: 1 }),
      node('Gemm', ['x', 'W1', 'b1'], ['z1'], { transB: 1 }),
      node('Relu', ['z1'], ['h']),
      node('Gemm', ['h', 'W2', 'b2'], ['reward'], { transB: 1 }),
      node('Softmax', ['reward'], ['persona_prob'], { axis: -1 }),
      node('Sub', ['reward', 'midpoint'], ['centered']),
      node('Sigmoid', ['centered'], ['fidelity']),
    ],
    initializers: [
      initializer('E', [buckets, emb], Float32Array.from(net.E.value)),
      initializer('W1', [hidden, emb + dense], Float32Array.from(net.W1.value)),
      initializer('b1', [hidden], Float32Array.from(net.b1.value)),
      initializer('W2', [actions, hidden], Float32Array.from(net.W2.value)),
      initializer('b2', [actions], Float32Array.from(net.b2.value)),
      initializer('midpoint', [actions], info.midpoints),
      initializer('axis1', [1], [1], 'int64'),
      initializer('axis2', [1], [2], 'int64'),
    ],
    inputs: [valueInfo('ids', 'int64', ['batch', 'n']), valueInfo('weights', 'float', ['batch', 'n']), valueInfo('dense', 'float', ['batch', dense])],
    outputs: [valueInfo('reward', 'float', ['batch', actions]), valueInfo('persona_prob', 'float', ['batch', actions]), valueInfo('fidelity', 'float', ['batch', actions])],
    metadata: {
      'mascot.kind': REWARD_KIND,
      'mascot.pack': info.pack,
      'mascot.personas': JSON.stringify(info.personas),
      'mascot.feature_version': info.featureVersion,
      'mascot.dense_names': JSON.stringify(info.denseNames),
      'mascot.shape': JSON.stringify(net.shape),
      'mascot.model_version': info.version,
      'mascot.training': JSON.stringify(info.training),
    },
  });
}

const metadataSchema = z.object({
  'mascot.pack': z.string().min(1),
  'mascot.personas': z.string(),
  'mascot.feature_version': z.string(),
  'mascot.dense_names': z.string(),
  'mascot.shape': z.string(),
  'mascot.model_version': z.string().min(1),
  'mascot.training': z.string().default('{}'),
});

/** Read and check a reward model's metadata; throws OnnxModelError naming the file and the problem. */
export function readRewardInfo(bytes: Uint8Array, where: string): RewardModelInfo {
  const model = decodeModel(bytes, where);
  const raw = Object.fromEntries(model.metadataProps.map((p) => [p.key, p.value]));
  if (raw['mascot.kind'] !== REWARD_KIND)
    throw new OnnxModelError(`${where}: not a MASCOT persona reward model (metadata mascot.kind is ${raw['mascot.kind'] === undefined ? 'missing' : `"${raw['mascot.kind']}"`})`);
  const parsed = metadataSchema.safeParse(raw);
  if (!parsed.success) throw new OnnxModelError(`${where}: bad reward model metadata: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const m = parsed.data;
  const json = (key: keyof typeof m): unknown => {
    try {
      return JSON.parse(m[key]);
    } catch {
      throw new OnnxModelError(`${where}: metadata ${key} is not JSON`);
    }
  };
  if (m['mascot.feature_version'] !== REWARD_FEATURE_VERSION)
    throw new OnnxModelError(`${where}: built for features "${m['mascot.feature_version']}", this version computes "${REWARD_FEATURE_VERSION}"; retrain with \`mascot train reward\``);
  const denseNames = z.array(z.string()).parse(json('mascot.dense_names'));
  if (denseNames.join(',') !== DENSE_NAMES.join(',')) throw new OnnxModelError(`${where}: dense feature layout differs from this version's (${DENSE_NAMES.join(', ')}); retrain`);
  const personas = z.array(z.string()).safeParse(json('mascot.personas'));
  const shape = z.object({ buckets: z.number().int().positive(), emb: z.number().int().positive(), dense: z.number().int(), hidden: z.number().int().positive(), actions: z.number().int().positive() }).safeParse(json('mascot.shape'));
  if (!personas.success || !shape.success) throw new OnnxModelError(`${where}: metadata mascot.personas or mascot.shape is malformed`);
  const midpoints = Array.from(readInitializer(model, 'midpoint').data, Number);
  return {
    pack: m['mascot.pack'],
    personas: personas.data,
    featureVersion: m['mascot.feature_version'],
    denseNames,
    shape: shape.data,
    midpoints,
    version: m['mascot.model_version'],
    training: (json('mascot.training') ?? {}) as Record<string, unknown>,
  };
}

/** The served network's weights, for the TypeScript forward pass (parity checks, tests). */
export function decodeRewardNetwork(bytes: Uint8Array, where: string): { net: DirectorNetwork; info: RewardModelInfo } {
  const info = readRewardInfo(bytes, where);
  const model = decodeModel(bytes, where);
  const net = new DirectorNetwork(info.shape);
  loadInitializers(model, net.params, where);
  return { net, info };
}

/** Scores of one turn under every persona of the model. */
export interface TurnScores {
  /** Raw reward per persona (head order = info.personas). */
  reward: number[];
  /** Softmax over personas: how likely each persona wrote the turn. */
  personaProb: number[];
  /** Calibrated fidelity per persona, in [0, 1]. */
  fidelity: number[];
}

/** Pad a batch of features into the graph's three input tensors (padding ids carry weight 0). */
export function batchTensors(batch: readonly RewardFeatures[], denseWidth: number): Record<'ids' | 'weights' | 'dense', ort.Tensor> {
  const n = Math.max(1, ...batch.map((f) => f.ids.length));
  const ids = new BigInt64Array(batch.length * n);
  const weights = new Float32Array(batch.length * n);
  const dense = new Float32Array(batch.length * denseWidth);
  batch.forEach((f, b) => {
    for (let k = 0; k < f.ids.length; k++) {
      ids[b * n + k] = BigInt(f.ids[k]!);
      weights[b * n + k] = f.weights[k]!;
    }
    dense.set(f.dense, b * denseWidth);
  });
  return {
    ids: new ort.Tensor('int64', ids, [batch.length, n]),
    weights: new ort.Tensor('float32', weights, [batch.length, n]),
    dense: new ort.Tensor('float32', dense, [batch.length, denseWidth]),
  };
}

/** A persona reward model served by onnxruntime-node. */
export class PersonaRewardModel {
  readonly featurizer: RewardFeaturizer;

  private constructor(
    readonly info: RewardModelInfo,
    private readonly session: ort.InferenceSession,
    readonly provider: ExecutionProvider,
    readonly file: string,
  ) {
    this.featurizer = new RewardFeaturizer(info.shape.buckets);
  }

  static async load(file: string, options: { executionProvider?: ExecutionProvider; warn?: (m: string) => void } = {}): Promise<PersonaRewardModel> {
    let bytes: Uint8Array;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      throw new OnnxModelError(`${file}: cannot read persona reward model (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const info = readRewardInfo(bytes, file);
    const { session, provider } = await createSession(bytes, { executionProvider: options.executionProvider, warn: options.warn });
    return new PersonaRewardModel(info, session, provider, file);
  }

  hasPersona(personaId: string): boolean {
    return this.info.personas.includes(personaId);
  }

  /** Score several texts, each after its own context, under every persona, in one run. */
  async scoreTurns(items: readonly { context: readonly ContextTurn[]; text: string }[]): Promise<TurnScores[]> {
    if (items.length === 0) return [];
    const feeds = batchTensors(
      items.map((it) => this.featurizer.features(it.context, it.text)),
      this.info.shape.dense,
    );
    const out = await this.session.run(feeds);
    const P = this.info.personas.length;
    const rows = (name: string) => {
      const data = out[name]!.data as Float32Array;
      return items.map((_, b) => Array.from(data.subarray(b * P, (b + 1) * P)));
    };
    const reward = rows('reward');
    const prob = rows('persona_prob');
    const fidelity = rows('fidelity');
    return items.map((_, b) => ({ reward: reward[b]!, personaProb: prob[b]!, fidelity: fidelity[b]! }));
  }

  /** Head index of a persona; throws naming the model's personas when it has no such head. */
  head(personaId: string): number {
    const i = this.info.personas.indexOf(personaId);
    if (i < 0) throw new Error(`persona "${personaId}" is not in reward model ${this.file} (pack ${this.info.pack}: ${this.info.personas.join(', ')})`);
    return i;
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
