import { describe, expect, it } from 'vitest';
import { Adam, type Param } from '../src/learn/adam.ts';

const param = (name: string, values: number[], rowWidth?: number): Param => ({
  name,
  value: Float64Array.from(values),
  grad: new Float64Array(values.length),
  ...(rowWidth ? { rowWidth, touched: new Set<number>() } : {}),
});

describe('Adam', () => {
  it('takes the textbook first step: lr * sign(g)', () => {
    const p = param('w', [1, -2, 3]);
    const adam = new Adam([p], { lr: 0.1 });
    p.grad.set([0.5, -4, 0]);
    adam.step();
    // After one step m_hat = g and v_hat = g^2, so the update is lr * g / (|g| + eps).
    expect(p.value[0]).toBeCloseTo(0.9, 6);
    expect(p.value[1]).toBeCloseTo(-1.9, 6);
    expect(p.value[2]).toBe(3);
  });

  it('minimises a quadratic', () => {
    const p = param('w', [5, -3]);
    const adam = new Adam([p], { lr: 0.05 });
    for (let i = 0; i < 2000; i++) {
      adam.zeroGrad();
      // f = (w0 - 1)^2 + 10 (w1 + 2)^2
      p.grad[0] = 2 * (p.value[0]! - 1);
      p.grad[1] = 20 * (p.value[1]! + 2);
      adam.step();
    }
    expect(p.value[0]).toBeCloseTo(1, 3);
    expect(p.value[1]).toBeCloseTo(-2, 3);
  });

  it('updates only touched rows of a sparse parameter and clears them', () => {
    const table = param('emb', [1, 1, 1, 1, 1, 1], 2);
    const adam = new Adam([table], { lr: 0.1 });
    table.grad[2] = 1;
    table.grad[3] = -1;
    table.touched!.add(1);
    adam.step();
    expect(Array.from(table.value)).toEqual([1, 1, expect.closeTo(0.9, 6), expect.closeTo(1.1, 6), 1, 1]);
    adam.zeroGrad();
    expect(table.touched!.size).toBe(0);
    expect(Array.from(table.grad)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('clips the global gradient norm', () => {
    const p = param('w', [0, 0]);
    const adam = new Adam([p], { lr: 0.1, maxGradNorm: 1 });
    p.grad.set([30, 40]);
    expect(adam.step()).toBeCloseTo(50, 9);
  });

  it('saves and restores its state', () => {
    const a = param('w', [1, 2]);
    const adam = new Adam([a], { lr: 0.01 });
    a.grad.set([1, 1]);
    adam.step();
    const b = param('w', Array.from(a.value));
    const resumed = new Adam([b], { lr: 0.01 });
    resumed.load(adam.state());
    a.grad.set([0.3, -0.2]);
    b.grad.set([0.3, -0.2]);
    adam.step();
    resumed.step();
    expect(Array.from(b.value)).toEqual(Array.from(a.value));
    expect(() => new Adam([param('x', [1])], { lr: 0.01 }).load(adam.state())).toThrow(/does not match parameter "x"/);
  });

  it('rejects a non-positive learning rate and duplicate names', () => {
    expect(() => new Adam([param('w', [1])], { lr: 0 })).toThrow(/learning rate/);
    expect(() => new Adam([param('w', [1]), param('w', [2])], { lr: 1 })).toThrow(/two parameters/);
  });
});
