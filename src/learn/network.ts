// The director network, forward and backward, in plain TypeScript (float64 during training;
// exported to ONNX as float32):
//
//   bag    = sum_k w_k * E[id_k]                    embedding-bag over hashed ids   [emb]
//   x      = concat(bag, dense)                                                      [emb + dense]
//   h      = relu(W1 x + b1)                                                         [hidden]
//   logits = W2 h + b2                              one logit per action slot        [actions]
//   p      = softmax(logits over allowed slots)     masked slots get 0
//
// Backward takes dL/dlogits (the loss is the caller's: GRPO, distillation) and accumulates
// gradients into the parameters; embedding rows touched are recorded for lazy Adam.
import type { Param } from './adam.ts';
import { maskedSoftmax } from '../director/actions.ts';
import type { Rng } from '../util/rng.ts';

export interface NetworkShape {
  buckets: number;
  emb: number;
  dense: number;
  hidden: number;
  actions: number;
}

export interface NetworkInput {
  ids: ArrayLike<number>;
  weights: ArrayLike<number>;
  dense: ArrayLike<number>;
  mask: readonly boolean[];
}

/** Everything the backward pass needs from a forward pass. */
export interface ForwardResult {
  input: NetworkInput;
  x: Float64Array;
  h: Float64Array;
  logits: Float64Array;
  probabilities: number[];
}

export class DirectorNetwork {
  readonly E: Param;
  readonly W1: Param;
  readonly b1: Param;
  readonly W2: Param;
  readonly b2: Param;

  constructor(readonly shape: NetworkShape) {
    const { buckets, emb, dense, hidden, actions } = shape;
    const param = (name: string, size: number, rowWidth?: number): Param => ({
      name,
      value: new Float64Array(size),
      grad: new Float64Array(size),
      ...(rowWidth ? { rowWidth, touched: new Set<number>() } : {}),
    });
    this.E = param('E', buckets * emb, emb);
    this.W1 = param('W1', hidden * (emb + dense));
    this.b1 = param('b1', hidden);
    this.W2 = param('W2', actions * hidden);
    this.b2 = param('b2', actions);
  }

  get params(): Param[] {
    return [this.E, this.W1, this.b1, this.W2, this.b2];
  }

  /**
   * Random initialisation: small embeddings, He-scaled first layer, and a near-zero output layer
   * so the untrained policy is close to uniform over allowed actions.
   */
  static initialized(shape: NetworkShape, rng: Rng): DirectorNetwork {
    const net = new DirectorNetwork(shape);
    const gauss = () => {
      // Box-Muller
      const u = Math.max(rng.next(), 1e-12);
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
    };
    const fill = (p: Param, std: number) => {
      for (let i = 0; i < p.value.length; i++) p.value[i] = gauss() * std;
    };
    fill(net.E, 0.1);
    fill(net.W1, Math.sqrt(2 / (shape.emb + shape.dense)));
    net.b1.value.fill(0.01);
    fill(net.W2, 0.01);
    return net;
  }

  /** A copy with the same weights (the reference or old policy of GRPO). */
  clone(): DirectorNetwork {
    const copy = new DirectorNetwork(this.shape);
    for (const [i, p] of this.params.entries()) copy.params[i]!.value.set(p.value);
    return copy;
  }

  forward(input: NetworkInput): ForwardResult {
    const { emb, dense, hidden, actions, buckets } = this.shape;
    if (input.dense.length !== dense) throw new Error(`dense features: got ${input.dense.length}, the network takes ${dense}`);
    if (input.mask.length !== actions) throw new Error(`mask: got ${input.mask.length} slots, the network has ${actions}`);
    const width = emb + dense;
    const x = new Float64Array(width);
    const E = this.E.value;
    for (let k = 0; k < input.ids.length; k++) {
      const id = input.ids[k]!;
      if (id < 0 || id >= buckets) throw new RangeError(`hashed id ${id} outside [0, ${buckets})`);
      const w = input.weights[k]!;
      const row = id * emb;
      for (let j = 0; j < emb; j++) x[j]! += w * E[row + j]!;
    }
    for (let j = 0; j < dense; j++) x[emb + j] = input.dense[j]!;

    const h = new Float64Array(hidden);
    const W1 = this.W1.value;
    for (let o = 0; o < hidden; o++) {
      let s = this.b1.value[o]!;
      const row = o * width;
      for (let j = 0; j < width; j++) s += W1[row + j]! * x[j]!;
      h[o] = s > 0 ? s : 0;
    }
    const logits = new Float64Array(actions);
    const W2 = this.W2.value;
    for (let a = 0; a < actions; a++) {
      let s = this.b2.value[a]!;
      const row = a * hidden;
      for (let o = 0; o < hidden; o++) s += W2[row + o]! * h[o]!;
      logits[a] = s;
    }
    return { input, x, h, logits, probabilities: maskedSoftmax(Array.from(logits), input.mask) };
  }

  /** Accumulate gradients of a loss given dL/dlogits for one forward pass. */
  backward(f: ForwardResult, dLogits: ArrayLike<number>): void {
    const { emb, dense, hidden, actions } = this.shape;
    const width = emb + dense;
    const dh = new Float64Array(hidden);
    const W2 = this.W2.value;
    const gW2 = this.W2.grad;
    for (let a = 0; a < actions; a++) {
      const g = dLogits[a]!;
      if (g === 0) continue;
      this.b2.grad[a]! += g;
      const row = a * hidden;
      for (let o = 0; o < hidden; o++) {
        gW2[row + o]! += g * f.h[o]!;
        dh[o]! += g * W2[row + o]!;
      }
    }
    const dx = new Float64Array(emb); // only the embedding part of x needs its gradient
    const W1 = this.W1.value;
    const gW1 = this.W1.grad;
    for (let o = 0; o < hidden; o++) {
      if (f.h[o]! <= 0) continue; // relu'(z) = 0 for z <= 0
      const g = dh[o]!;
      if (g === 0) continue;
      this.b1.grad[o]! += g;
      const row = o * width;
      for (let j = 0; j < width; j++) gW1[row + j]! += g * f.x[j]!;
      for (let j = 0; j < emb; j++) dx[j]! += g * W1[row + j]!;
    }
    const gE = this.E.grad;
    for (let k = 0; k < f.input.ids.length; k++) {
      const id = f.input.ids[k]!;
      const w = f.input.weights[k]!;
      const row = id * emb;
      for (let j = 0; j < emb; j++) gE[row + j]! += w * dx[j]!;
      this.E.touched!.add(id);
    }
  }
}
