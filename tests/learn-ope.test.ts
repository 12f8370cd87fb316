import { describe, expect, it } from 'vitest';
import { compareOffPolicy, evaluateOffPolicy, ridge, type OpeSample } from '../src/learn/ope.ts';
import { createRng, sampleIndex } from '../src/util/rng.ts';

/**
 * A contextual bandit with a known answer: context x in {0,1}^2, three actions, mean reward
 * mu(x, a); the logging policy is near uniform, the target prefers the best action.
 */
const mu = (x: number[], a: number) => [0.2 + 0.5 * x[0]!, 0.6 - 0.3 * x[1]!, 0.4][a]!;
const behaviour = () => [0.4, 0.3, 0.3];
const target = (x: number[]) => {
  const best = [0, 1, 2].reduce((b, a) => (mu(x, a) > mu(x, b) ? a : b), 0);
  return [0, 1, 2].map((a) => (a === best ? 0.8 : 0.1));
};
const contexts = [[0, 0], [0, 1], [1, 0], [1, 1]];
const trueValue = (policy: (x: number[]) => number[]) =>
  contexts.reduce((s, x) => s + policy(x).reduce((v, p, a) => v + p * mu(x, a), 0), 0) / contexts.length;

function logged(n: number, seed: number): OpeSample[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, () => {
    const x = contexts[Math.floor(rng.next() * 4)]!;
    const b = behaviour();
    const a = sampleIndex(b, rng);
    const reward = mu(x, a) + (rng.next() - 0.5) * 0.4;
    return { target: target(x), action: a, propensity: b[a]!, reward, features: x };
  });
}

describe('off-policy evaluation', () => {
  it('recovers the target policy value with every estimator, inside its 95% interval', () => {
    const truth = trueValue(target);
    const behaviourValue = trueValue(() => behaviour());
    const report = evaluateOffPolicy(logged(3000, 1), { bootstrap: 300 });
    for (const est of [report.ips, report.snips, report.dr]) {
      expect(est.low).toBeLessThan(truth);
      expect(est.high).toBeGreaterThan(truth);
      expect(Math.abs(est.estimate - truth)).toBeLessThan(0.03);
    }
    expect(Math.abs(report.logged.estimate - behaviourValue)).toBeLessThan(0.02);
    // The target is better than the logging policy, and the paired interval says so.
    expect(truth - behaviourValue).toBeGreaterThan(0.1);
    expect(report.drGain.low).toBeGreaterThan(0);
    // DR with a good reward model is tighter than IPS.
    expect(report.dr.high - report.dr.low).toBeLessThan(report.ips.high - report.ips.low);
    expect(report.enoughData).toBe(true);
    expect(report.warnings).toEqual([]);
    // ESS = (sum w)^2 / sum w^2 is well below n for a target this different from the logger.
    expect(report.ess).toBeGreaterThan(1500);
    expect(report.ess).toBeLessThan(3000);
  });

  it('warns when the effective sample size is too small to decide', () => {
    const report = evaluateOffPolicy(logged(40, 2), { bootstrap: 100 });
    expect(report.enoughData).toBe(false);
    expect(report.warnings[0]).toMatch(/effective sample size \d+\.\d is below 50/);
  });

  it('clips large weights and reports how many', () => {
    const samples: OpeSample[] = [
      { target: [1, 0], action: 0, propensity: 0.01, reward: 1, features: [0] },
      { target: [1, 0], action: 1, propensity: 0.99, reward: 0, features: [0] },
    ];
    const report = evaluateOffPolicy(samples, { clip: 10, bootstrap: 50, minEss: 1 });
    expect(report.maxWeight).toBeCloseTo(100, 9);
    expect(report.clippedShare).toBe(0.5);
    expect(report.ips.estimate).toBeCloseTo((10 * 1 + 0) / 2, 9);
    expect(report.warnings.some((w) => /clipped at 10/.test(w))).toBe(true);
  });

  it('fits ridge regression', () => {
    const xs = Array.from({ length: 50 }, (_, i) => [i / 10, (i % 7) / 3]);
    const beta = ridge(xs, xs.map(([a, b]) => 1 + 2 * a! - 3 * b!), 1e-9);
    expect(Array.from(beta).map((v) => Number(v.toFixed(6)))).toEqual([1, 2, -3]);
  });

  it('refuses an empty log', () => {
    expect(() => evaluateOffPolicy([])).toThrow(/no logged decisions/);
  });
});

describe('paired comparison', () => {
  it('finds the better of two target policies on the same log', () => {
    const samples = logged(3000, 3);
    const worse = samples.map((s) => {
      const x = s.features as number[];
      const best = [0, 1, 2].reduce((b, a) => (mu(x, a) > mu(x, b) ? a : b), 0);
      return [0, 1, 2].map((a) => (a === best ? 0.1 : 0.45));
    });
    const c = compareOffPolicy(samples, worse, { bootstrap: 200 });
    expect(c.difference.low).toBeGreaterThan(0);
    expect(c.difference.estimate).toBeCloseTo(c.candidate.dr.estimate - c.baseline.dr.estimate, 9);
    // Against itself the difference is exactly 0.
    const same = compareOffPolicy(samples, samples.map((s) => s.target), { bootstrap: 50 });
    expect(same.difference).toEqual({ estimate: 0, low: 0, high: 0 });
  });
});
