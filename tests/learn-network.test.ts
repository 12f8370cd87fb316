import { describe, expect, it } from 'vitest';
import { DirectorNetwork, type NetworkInput, type NetworkShape } from '../src/learn/network.ts';
import { clippedSurrogate, crossEntropy, groupAdvantages, klDivergence, klPenalty } from '../src/learn/objectives.ts';
import { createRng } from '../src/util/rng.ts';

const shape: NetworkShape = { buckets: 16, emb: 3, dense: 4, hidden: 6, actions: 5 };
const input: NetworkInput = {
  ids: [3, 7, 3, 15],
  weights: [0.5, -0.5, 0.25, 1],
  dense: [1, 0.3, -0.7, 0],
  mask: [true, false, true, true, true],
};

/** A loss mixing every objective, so one check covers all their gradients. */
function loss(net: DirectorNetwork, old: DirectorNetwork, ref: DirectorNetwork, dLogits?: Float64Array): number {
  const p = net.forward(input).probabilities;
  const pOld = old.forward(input).probabilities;
  const pRef = ref.forward(input).probabilities;
  const g = dLogits ?? new Float64Array(shape.actions);
  let total = 0;
  total += clippedSurrogate(p, pOld[0]!, 0, 1.3, 0.2, g, 0.5).loss * 0.5;
  total += clippedSurrogate(p, pOld[3]!, 3, -0.8, 0.2, g, 0.5).loss * 0.5;
  total += 0.3 * klPenalty(p, pRef, g, 0.3);
  total += 0.1 * crossEntropy(p, [0.2, 0, 0.5, 0.1, 0.2], g, 0.1);
  return total;
}

describe('director network gradients', () => {
  it('match central finite differences for every parameter', () => {
    const net = DirectorNetwork.initialized(shape, createRng(3));
    // Larger output weights than the near-uniform initialisation, so every term is exercised.
    for (let i = 0; i < net.W2.value.length; i++) net.W2.value[i] = Math.sin(i) * 0.8;
    const old = net.clone();
    for (let i = 0; i < old.W2.value.length; i++) old.W2.value[i]! += 0.05 * Math.cos(i);
    const ref = DirectorNetwork.initialized(shape, createRng(9));

    const f = net.forward(input);
    const dLogits = new Float64Array(shape.actions);
    loss(net, old, ref, dLogits);
    expect(dLogits[1]).toBe(0); // a masked slot gets no gradient
    net.backward(f, dLogits);

    const h = 1e-6;
    let checked = 0;
    for (const p of net.params) {
      const indices = p.name === 'E' ? [3 * 3, 3 * 3 + 2, 7 * 3 + 1, 15 * 3] : Array.from({ length: p.value.length }, (_, i) => i);
      for (const i of indices) {
        const v = p.value[i]!;
        p.value[i] = v + h;
        const up = loss(net, old, ref);
        p.value[i] = v - h;
        const down = loss(net, old, ref);
        p.value[i] = v;
        const numeric = (up - down) / (2 * h);
        expect(Math.abs(p.grad[i]! - numeric), `${p.name}[${i}]`).toBeLessThan(1e-6 + 1e-4 * Math.abs(numeric));
        checked++;
      }
    }
    expect(checked).toBe(4 + 6 * 7 + 6 + 5 * 6 + 5);
    expect([...net.E.touched!].sort((a, b) => a - b)).toEqual([3, 7, 15]);
    // Rows not in the bag have no gradient.
    expect(net.E.grad.slice(0, 9).every((g) => g === 0)).toBe(true);
  });

  it('gives masked slots zero probability and sums to one', () => {
    const net = DirectorNetwork.initialized(shape, createRng(1));
    const { probabilities } = net.forward(input);
    expect(probabilities[1]).toBe(0);
    expect(probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it('rejects inputs of the wrong size or out-of-range ids', () => {
    const net = new DirectorNetwork(shape);
    expect(() => net.forward({ ...input, dense: [1] })).toThrow(/dense features: got 1, the network takes 4/);
    expect(() => net.forward({ ...input, ids: [16], weights: [1] })).toThrow(/outside \[0, 16\)/);
  });
});

describe('GRPO pieces', () => {
  it('normalises advantages within a group (Bessel std) and zeroes flat groups', () => {
    const a = groupAdvantages([1, 2, 3]);
    // mean 2, sample std 1
    expect(a[0]).toBeCloseTo(-1 / 1.0001, 9);
    expect(a[2]).toBeCloseTo(1 / 1.0001, 9);
    expect(groupAdvantages([0.4, 0.4, 0.4])).toEqual([0, 0, 0]);
  });

  it('clips the ratio: no gradient once a positive advantage pushed rho past 1 + eps', () => {
    const g = new Float64Array(2);
    const term = clippedSurrogate([0.9, 0.1], 0.5, 0, 1, 0.2, g);
    expect(term.ratio).toBeCloseTo(1.8, 12);
    expect(term.clipped).toBe(true);
    expect(term.loss).toBeCloseTo(-1.2, 12);
    expect(Array.from(g)).toEqual([0, 0]);
    // A negative advantage with rho > 1 is not clipped: the loss keeps pushing it down.
    const neg = clippedSurrogate([0.9, 0.1], 0.5, 0, -1, 0.2, g);
    expect(neg.clipped).toBe(false);
    expect(g[0]).toBeGreaterThan(0);
  });

  it('computes the exact KL', () => {
    expect(klDivergence([0.5, 0.5, 0], [0.25, 0.75, 0])).toBeCloseTo(0.5 * Math.log(2) + 0.5 * Math.log(2 / 3), 12);
    expect(klDivergence([0.3, 0.7], [0.3, 0.7])).toBe(0);
  });
});
