// Small helpers to write ONNX models with `onnx-proto` (the protobuf classes of the ONNX schema)
// and to load them with onnxruntime-node. IR 8 with opset 17 is what onnxruntime-node 1.30 and
// Triton's ONNX backend both load. Models carry their identity in metadata_props, which the
// loaders check before serving a file.
import fs from 'node:fs';
import path from 'node:path';
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';

const { onnx } = onnxProto;

export const IR_VERSION = 8;
export const OPSET = 17;

export const DataType = {
  float: onnx.TensorProto.DataType.FLOAT,
  int64: onnx.TensorProto.DataType.INT64,
  int32: onnx.TensorProto.DataType.INT32,
} as const;
export type ElemType = keyof typeof DataType;

/** A constant tensor (weight, bias, shape) stored in the graph. */
export function initializer(name: string, dims: readonly number[], data: ArrayLike<number>, type: ElemType = 'float'): onnxProto.onnx.ITensorProto {
  const size = dims.reduce((a, b) => a * b, 1);
  if (data.length !== size) throw new Error(`initializer "${name}": ${data.length} values for shape [${dims.join(', ')}] (needs ${size})`);
  const tensor: onnxProto.onnx.ITensorProto = { name, dims: [...dims], dataType: DataType[type] };
  // raw_data is little-endian, which is what typed arrays are on every platform Node runs on.
  if (type === 'float') tensor.rawData = bytesOf(Float32Array.from(data));
  else if (type === 'int32') tensor.rawData = bytesOf(Int32Array.from(data));
  else tensor.rawData = bytesOf(BigInt64Array.from(Array.from(data, (v) => BigInt(v))));
  return tensor;
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

export type AttributeValue = number | string | number[] | { float: number } | { floats: number[] };

/** An operator node. Integer attributes are written as ints; wrap floats as `{ float: x }`. */
export function node(opType: string, inputs: string[], outputs: string[], attributes: Record<string, AttributeValue> = {}, name?: string): onnxProto.onnx.INodeProto {
  const AT = onnx.AttributeProto.AttributeType;
  const attribute = Object.entries(attributes).map(([key, v]): onnxProto.onnx.IAttributeProto => {
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) throw new Error(`node ${opType} attribute ${key}: ${v} is not an integer; pass { float: ${v} }`);
      return { name: key, type: AT.INT, i: v };
    }
    if (typeof v === 'string') return { name: key, type: AT.STRING, s: new TextEncoder().encode(v) };
    if (Array.isArray(v)) return { name: key, type: AT.INTS, ints: v };
    if ('float' in v) return { name: key, type: AT.FLOAT, f: v.float };
    return { name: key, type: AT.FLOATS, floats: v.floats };
  });
  return { opType, input: inputs, output: outputs, attribute, name: name ?? `${opType}_${outputs[0]}` };
}

/** A graph input or output: element type and shape, where a string is a symbolic dimension ("batch"). */
export function valueInfo(name: string, type: ElemType, shape: readonly (number | string)[]): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: DataType[type],
        shape: { dim: shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

export interface ModelSpec {
  graphName: string;
  nodes: onnxProto.onnx.INodeProto[];
  initializers: onnxProto.onnx.ITensorProto[];
  inputs: onnxProto.onnx.IValueInfoProto[];
  outputs: onnxProto.onnx.IValueInfoProto[];
  /** Written to metadata_props; loaders read it back with `readMetadata`. */
  metadata: Record<string, string>;
  docString?: string;
  producerVersion?: string;
}

/** Serialize a model (IR 8, opset 17) to bytes. */
export function encodeModel(spec: ModelSpec): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: IR_VERSION,
    opsetImport: [{ domain: '', version: OPSET }],
    producerName: 'mascot',
    producerVersion: spec.producerVersion ?? '1',
    docString: spec.docString ?? '',
    graph: {
      name: spec.graphName,
      node: spec.nodes,
      initializer: spec.initializers,
      input: spec.inputs,
      output: spec.outputs,
    },
    metadataProps: Object.entries(spec.metadata).map(([key, value]) => ({ key, value })),
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Write bytes atomically (temp file + rename) so a watcher never loads half a model. */
export function saveModel(file: string, bytes: Uint8Array): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
}

export class OnnxModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OnnxModelError';
  }
}

/** Decode a model file's bytes; a file that is not an ONNX model is an OnnxModelError naming it. */
export function decodeModel(bytes: Uint8Array, where = 'model'): onnxProto.onnx.ModelProto {
  try {
    const model = onnx.ModelProto.decode(bytes);
    if (!model.graph) throw new Error('no graph');
    return model;
  } catch (err) {
    throw new OnnxModelError(`${where}: not an ONNX model (${(err as Error).message})`);
  }
}

/** metadata_props of a model as a plain object. */
export function readMetadata(bytes: Uint8Array, where = 'model'): Record<string, string> {
  const model = decodeModel(bytes, where);
  return Object.fromEntries(model.metadataProps.map((p) => [p.key, p.value]));
}

/** Copy a model's initializers into parameters of the same names, checking each size. */
export function loadInitializers(model: onnxProto.onnx.ModelProto, params: readonly { name: string; value: Float32Array | Float64Array }[], where: string): void {
  for (const p of params) {
    const { data } = readInitializer(model, p.name);
    if (data.length !== p.value.length) throw new OnnxModelError(`${where}: weight ${p.name} has ${data.length} values, the shape in its metadata needs ${p.value.length}`);
    p.value.set(data);
  }
}

/** A named initializer of a model as numbers (float, int32 or int64; raw or typed fields). */
export function readInitializer(model: onnxProto.onnx.ModelProto, name: string): { dims: number[]; data: Float64Array } {
  const t = model.graph?.initializer?.find((i) => i.name === name);
  if (!t) throw new OnnxModelError(`initializer "${name}" not found`);
  const dims = (t.dims ?? []).map(Number);
  const raw = t.rawData ?? new Uint8Array(0);
  const buffer = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
  switch (t.dataType) {
    case DataType.float:
      return { dims, data: Float64Array.from(raw.length ? new Float32Array(buffer) : (t.floatData ?? [])) };
    case DataType.int32:
      return { dims, data: Float64Array.from(raw.length ? new Int32Array(buffer) : (t.int32Data ?? [])) };
    case DataType.int64:
      return { dims, data: Float64Array.from(raw.length ? Array.from(new BigInt64Array(buffer), Number) : (t.int64Data ?? []).map(Number)) };
    default:
      throw new OnnxModelError(`initializer "${name}": unsupported data type ${t.dataType}`);
  }
}

export type ExecutionProvider = 'cpu' | 'cuda';

export interface SessionOptions {
  /** `cuda` falls back to CPU, with one warning, when the CUDA provider is not installed. */
  executionProvider?: ExecutionProvider;
  /** Intra-op threads; 1 keeps a director decision on one core (and is fastest for tiny graphs). */
  threads?: number;
  warn?: (message: string) => void;
}

export interface LoadedSession {
  session: ort.InferenceSession;
  /** The provider actually in use. */
  provider: ExecutionProvider;
}

/** Set after the first failed CUDA session: later loads go straight to CPU without a retry. */
let cudaUnavailable = false;

/**
 * Create an onnxruntime-node session. When CUDA is asked for but its provider library is missing
 * (onnxruntime-node is installed for CPU unless `--onnxruntime-node-install=cuda12`), the model
 * still serves, on CPU, and the operator is told once per process.
 */
export async function createSession(model: Uint8Array | string, options: SessionOptions = {}): Promise<LoadedSession> {
  const base: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: options.threads ?? 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  };
  const create = (opts: ort.InferenceSession.SessionOptions) =>
    typeof model === 'string' ? ort.InferenceSession.create(model, opts) : ort.InferenceSession.create(model, opts);
  if (options.executionProvider === 'cuda' && !cudaUnavailable) {
    try {
      return { session: await create({ ...base, executionProviders: ['cuda', 'cpu'] }), provider: 'cuda' };
    } catch (err) {
      cudaUnavailable = true;
      const warn = options.warn ?? ((m: string) => process.emitWarning(m));
      warn(
        `MASCOT_ONNX_EP=cuda but the CUDA execution provider is not available (${firstLine(err)}); serving on CPU. ` +
          'Install onnxruntime-node with --onnxruntime-node-install=cuda12 on a GPU host.',
      );
    }
  }
  return { session: await create({ ...base, executionProviders: ['cpu'] }), provider: 'cpu' };
}

function firstLine(err: unknown): string {
  return String((err as Error).message ?? err).split('\n')[0]!;
}

/** Try CUDA again on the next load (tests; an operator who installed the provider restarts anyway). */
export function resetCudaProbe(): void {
  cudaUnavailable = false;
}

export { ort };
