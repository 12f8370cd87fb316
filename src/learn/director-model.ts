// The director as an ONNX file: the network's graph and weights, plus metadata naming the pack,
// the action slots, the feature version and layout, and the policy version. The same file serves
// in-process (onnxruntime-node), on a KServe v2 / Triton server, and as a training checkpoint.
//
// Graph (opset 17):
//   rows   = Gather(E, ids)                    [batch, n, emb]
//   bag    = ReduceSum(rows * weights[..., None], axis 1)
//   x      = Concat(bag, dense)
//   h      = Relu(Gemm(x, W1^T) + b1)
//   logits = Gemm(h, W2^T) + b2 + (mask - 1) * 1e9     masked slots -> -1e9
//   probabilities = Softmax(logits)
import fs from 'node:fs';
import { z } from 'zod';
import type { FeatureLayout } from './features.ts';
import { DirectorNetwork, type NetworkShape } from './network.ts';
import { decodeModel, encodeModel, initializer, loadInitializers, node, OnnxModelError, valueInfo } from './onnx.ts';

export const DIRECTOR_KIND = 'mascot-director';

/** Input and output names of the graph (also the tensor names a KServe server expects). */
export const IO = { ids: 'ids', weights: 'weights', dense: 'dense', mask: 'mask', probabilities: 'probabilities', logits: 'logits' } as const;

const MASK_PENALTY = 1e9;

export interface DirectorModelInfo {
  pack: string;
  layout: FeatureLayout;
  shape: NetworkShape;
  /** A name for this trained policy, e.g. "support-20260301-1a2b"; logged with every decision. */
  policyVersion: string;
  /** Free-form facts about training (seed, iterations, reward), shown by `mascot director list`. */
  training: Record<string, unknown>;
}

const metadataSchema = z.object({
  'mascot.kind': z.literal(DIRECTOR_KIND),
  'mascot.pack': z.string().min(1),
  'mascot.policy_version': z.string().min(1),
  'mascot.feature_version': z.string().min(1),
  'mascot.actions': z.string(),
  'mascot.dense_names': z.string(),
  'mascot.shape': z.string(),
  'mascot.training': z.string().default('{}'),
});

const shapeSchema = z.object({
  buckets: z.number().int().positive(),
  emb: z.number().int().positive(),
  dense: z.number().int().nonnegative(),
  hidden: z.number().int().positive(),
  actions: z.number().int().positive(),
});

/** Build the ONNX bytes of a director. */
export function encodeDirector(net: DirectorNetwork, info: DirectorModelInfo): Uint8Array {
  const { emb, dense, hidden, actions, buckets } = net.shape;
  if (info.layout.actions.length !== actions) throw new Error(`layout has ${info.layout.actions.length} actions, the network ${actions}`);
  if (info.layout.denseNames.length !== dense) throw new Error(`layout has ${info.layout.denseNames.length} dense features, the network ${dense}`);
  return encodeModel({
    graphName: `director_${info.pack}`,
    docString: `MASCOT director for pack "${info.pack}": hashed n-grams + conversation state -> one probability per action slot.`,
    nodes: [
      node('Gather', ['E', IO.ids], ['rows'], { axis: 0 }),
      node('Unsqueeze', [IO.weights, 'axis2'], ['weights3']),
      node('Mul', ['rows', 'weights3'], ['weighted']),
      node('ReduceSum', ['weighted', 'axis1'], ['bag'], { keepdims: 0 }),
      node('Concat', ['bag', IO.dense], ['x'], { axis: 1 }),
      node('Gemm', ['x', 'W1', 'b1'], ['z1'], { transB: 1 }),
      node('Relu', ['z1'], ['h']),
      node('Gemm', ['h', 'W2', 'b2'], ['raw_logits'], { transB: 1 }),
      node('Sub', [IO.mask, 'one'], ['mask_minus_one']),
      node('Mul', ['mask_minus_one', 'penalty'], ['mask_bias']),
      node('Add', ['raw_logits', 'mask_bias'], [IO.logits]),
      node('Softmax', [IO.logits], [IO.probabilities], { axis: -1 }),
    ],
    initializers: [
      initializer('E', [buckets, emb], f32(net.E.value)),
      initializer('W1', [hidden, emb + dense], f32(net.W1.value)),
      initializer('b1', [hidden], f32(net.b1.value)),
      initializer('W2', [actions, hidden], f32(net.W2.value)),
      initializer('b2', [actions], f32(net.b2.value)),
      initializer('axis1', [1], [1], 'int64'),
      initializer('axis2', [1], [2], 'int64'),
      initializer('one', [], [1]),
      initializer('penalty', [], [MASK_PENALTY]),
    ],
    inputs: [
      valueInfo(IO.ids, 'int64', ['batch', 'n']),
      valueInfo(IO.weights, 'float', ['batch', 'n']),
      valueInfo(IO.dense, 'float', ['batch', dense]),
      valueInfo(IO.mask, 'float', ['batch', actions]),
    ],
    outputs: [valueInfo(IO.probabilities, 'float', ['batch', actions]), valueInfo(IO.logits, 'float', ['batch', actions])],
    metadata: {
      'mascot.kind': DIRECTOR_KIND,
      'mascot.pack': info.pack,
      'mascot.policy_version': info.policyVersion,
      'mascot.feature_version': info.layout.version,
      'mascot.actions': JSON.stringify(info.layout.actions),
      'mascot.dense_names': JSON.stringify(info.layout.denseNames),
      'mascot.shape': JSON.stringify(net.shape),
      'mascot.training': JSON.stringify(info.training),
    },
  });
}

function f32(values: Float64Array): Float32Array {
  return Float32Array.from(values);
}

/** Read a director file's metadata; throws OnnxModelError saying what is wrong and where. */
export function readDirectorInfo(bytes: Uint8Array, where: string): DirectorModelInfo {
  const model = decodeModel(bytes, where);
  const raw = Object.fromEntries(model.metadataProps.map((p) => [p.key, p.value]));
  if (raw['mascot.kind'] !== DIRECTOR_KIND)
    throw new OnnxModelError(`${where}: not a MASCOT director (metadata mascot.kind is ${raw['mascot.kind'] === undefined ? 'missing' : `"${raw['mascot.kind']}"`})`);
  const parsed = metadataSchema.safeParse(raw);
  if (!parsed.success) throw new OnnxModelError(`${where}: bad director metadata: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const m = parsed.data;
  const json = (key: keyof typeof m): unknown => {
    try {
      return JSON.parse(m[key]);
    } catch {
      throw new OnnxModelError(`${where}: metadata ${key} is not JSON`);
    }
  };
  const shape = shapeSchema.safeParse(json('mascot.shape'));
  const actions = z.array(z.string()).safeParse(json('mascot.actions'));
  const denseNames = z.array(z.string()).safeParse(json('mascot.dense_names'));
  if (!shape.success || !actions.success || !denseNames.success) throw new OnnxModelError(`${where}: metadata mascot.shape, mascot.actions or mascot.dense_names is malformed`);
  return {
    pack: m['mascot.pack'],
    policyVersion: m['mascot.policy_version'],
    shape: shape.data,
    layout: { version: m['mascot.feature_version'], buckets: shape.data.buckets, actions: actions.data, denseNames: denseNames.data },
    training: (json('mascot.training') ?? {}) as Record<string, unknown>,
  };
}

/** Rebuild the network from a director file's weights (to resume training or as a reference policy). */
export function decodeDirector(bytes: Uint8Array, where: string): { net: DirectorNetwork; info: DirectorModelInfo } {
  const info = readDirectorInfo(bytes, where);
  const model = decodeModel(bytes, where);
  const net = new DirectorNetwork(info.shape);
  loadInitializers(model, net.params, where);
  return { net, info };
}

export function readDirectorFile(file: string): { bytes: Uint8Array; info: DirectorModelInfo } {
  let bytes: Uint8Array;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    throw new OnnxModelError(`${file}: cannot read director model (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return { bytes, info: readDirectorInfo(bytes, file) };
}

