// The learned director served from an ONNX file: features in TypeScript, the network in
// onnxruntime-node (CPU, or CUDA with a CPU fallback) or on a remote KServe v2 server, then the
// pack's floor and sampling like every other policy. A file made for another pack, other action
// slots or another feature version is refused at load with the reason.
import type { Action, Decision } from '../core/types.ts';
import { IO, readDirectorFile, type DirectorModelInfo } from '../learn/director-model.ts';
import { DirectorFeaturizer, layoutMismatch, type DirectorFeatures } from '../learn/features.ts';
import { createSession, OnnxModelError, ort, type ExecutionProvider } from '../learn/onnx.ts';
import type { Pack } from '../persona/schema.ts';
import type { Rng } from '../util/rng.ts';
import { applyFloor, decideFrom } from './actions.ts';
import type { DirectorState, Policy } from './policy.ts';

/** Runs the network on one example: allowed-slot probabilities in slot order. */
export interface DirectorInference {
  readonly where: string;
  run(features: DirectorFeatures): Promise<Float32Array | number[]>;
  close(): Promise<void>;
}

/** The four input tensors of the director graph for one example (batch of 1). */
export function directorFeeds(f: DirectorFeatures): Record<string, ort.Tensor> {
  const n = f.ids.length;
  // int64 ids written as little-endian (low, high) 32-bit halves: no BigInt per id on the hot path.
  const ids = new BigInt64Array(n);
  const halves = new Int32Array(ids.buffer);
  for (let i = 0; i < n; i++) halves[2 * i] = f.ids[i]!;
  return {
    [IO.ids]: new ort.Tensor('int64', ids, [1, n]),
    [IO.weights]: new ort.Tensor('float32', f.weights, [1, n]),
    [IO.dense]: new ort.Tensor('float32', f.dense, [1, f.dense.length]),
    [IO.mask]: new ort.Tensor('float32', Float32Array.from(f.mask, (m) => (m ? 1 : 0)), [1, f.mask.length]),
  };
}

/** In-process inference with onnxruntime-node. */
export class LocalInference implements DirectorInference {
  private constructor(
    private readonly session: ort.InferenceSession,
    readonly provider: ExecutionProvider,
    readonly where: string,
  ) {}

  static async open(bytes: Uint8Array, where: string, options: { executionProvider?: ExecutionProvider; warn?: (m: string) => void } = {}): Promise<LocalInference> {
    const { session, provider } = await createSession(bytes, { executionProvider: options.executionProvider, warn: options.warn });
    return new LocalInference(session, provider, where);
  }

  async run(f: DirectorFeatures): Promise<Float32Array> {
    const out = await this.session.run(directorFeeds(f), [IO.probabilities]);
    return out[IO.probabilities]!.data as Float32Array;
  }

  close(): Promise<void> {
    return this.session.release();
  }
}

export interface OnnxPolicyOptions {
  /** Decides a turn when the model cannot (another pack, a remote server down). */
  fallback?: Policy;
  /** Told when a turn falls back (rate limiting is the caller's). */
  onFallback?: (reason: string) => void;
}

export class OnnxPolicy implements Policy {
  readonly id = 'onnx';
  readonly version: string;
  readonly featurizer: DirectorFeaturizer;

  constructor(
    readonly pack: Pack,
    readonly info: DirectorModelInfo,
    readonly inference: DirectorInference,
    private readonly options: OnnxPolicyOptions = {},
  ) {
    assertServes(info, pack, inference.where);
    this.version = info.policyVersion;
    this.featurizer = new DirectorFeaturizer(pack, info.layout.buckets);
  }

  async decide(state: DirectorState, rng: Rng): Promise<Decision> {
    if (state.pack.id !== this.pack.id) return this.fallBack(state, rng, `the model serves pack "${this.pack.id}", this channel uses "${state.pack.id}"`);
    const features = this.featurizer.extract(state);
    let raw: Float32Array | number[];
    try {
      raw = await this.inference.run(features);
    } catch (err) {
      return this.fallBack(state, rng, `inference failed at ${this.inference.where}: ${(err as Error).message}`);
    }
    const probabilities = applyFloor(Array.from(raw), features.mask, state.floor);
    return decideFrom(state, this.featurizer.slots, probabilities, rng, {
      policyId: this.id,
      policyVersion: this.version,
      reason: (a: Action) => `learned director ${this.version}: p=${probabilities[this.featurizer.slots.indexOf(a.kind === 'yield' ? 'yield' : `${a.personaId}:${a.strategy}`)]!.toFixed(2)}`,
    });
  }

  private async fallBack(state: DirectorState, rng: Rng, why: string): Promise<Decision> {
    const fallback = this.options.fallback;
    if (!fallback) throw new Error(`onnx director ${this.version}: ${why}`);
    this.options.onFallback?.(why);
    const decision = await fallback.decide(state, rng);
    return { ...decision, reason: `${decision.reason} (onnx director ${this.version} unavailable: ${why})` };
  }

  close(): Promise<void> {
    return this.inference.close();
  }
}

/** Throw a clear error when a model cannot serve a pack. */
export function assertServes(info: DirectorModelInfo, pack: Pack, where: string): void {
  if (info.pack !== pack.id) throw new OnnxModelError(`${where}: this director was trained for pack "${info.pack}" and cannot direct pack "${pack.id}"`);
  const why = layoutMismatch(info.layout, new DirectorFeaturizer(pack, info.layout.buckets).layout);
  if (why) throw new OnnxModelError(`${where}: cannot serve pack "${pack.id}": ${why}`);
}

export interface LoadOnnxOptions extends OnnxPolicyOptions {
  executionProvider?: ExecutionProvider;
  warn?: (message: string) => void;
  /** Serve through this inference instead of onnxruntime in-process (e.g. a KServe client). */
  remote?: (bytes: Uint8Array, info: DirectorModelInfo) => DirectorInference;
}

/** Load a director file for a pack (`onnx:<file>` in evaluation, promoted versions in serving). */
export async function loadOnnxPolicy(file: string, pack: Pack, options: LoadOnnxOptions = {}): Promise<OnnxPolicy> {
  const { bytes, info } = readDirectorFile(file);
  return policyFromBytes(bytes, info, file, pack, options);
}

export async function policyFromBytes(bytes: Uint8Array, info: DirectorModelInfo, where: string, pack: Pack, options: LoadOnnxOptions = {}): Promise<OnnxPolicy> {
  assertServes(info, pack, where);
  const inference = options.remote ? options.remote(bytes, info) : await LocalInference.open(bytes, where, options);
  return new OnnxPolicy(pack, info, inference, options);
}

