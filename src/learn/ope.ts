// Off-policy evaluation of a candidate director on logged decisions, from their stored
// propensities p_i = pi_b(a_i | x_i) and the candidate's probabilities pi_e(. | x_i):
//
//   w_i   = pi_e(a_i|x_i) / p_i,        w'_i = min(w_i, M)            (clipped weights)
//   IPS   = mean_i  w'_i r_i
//   SNIPS = sum_i w'_i r_i / sum_i w'_i
//   DR    = mean_i [ sum_a pi_e(a|x_i) q(x_i,a) + w'_i (r_i - q(x_i,a_i)) ]
//   ESS   = (sum_i w_i)^2 / sum_i w_i^2                                (effective sample size)
//
// q is a ridge regression per action on the dense features, cross-fitted (each fold's q is fitted
// on the other folds) so DR's correction term is not biased by q having seen r_i. Intervals are
// percentile bootstrap over decisions (q held fixed), and the candidate-minus-logged difference is
// bootstrapped paired, on the same resamples.
import { createRng, type Rng } from '../util/rng.ts';

export interface OpeSample {
  /** Target policy's probabilities over slots. */
  target: readonly number[];
  /** Logged action slot and its logged propensity. */
  action: number;
  propensity: number;
  reward: number;
  /** Features for the reward model q. */
  features: ArrayLike<number>;
}

export interface Interval {
  estimate: number;
  low: number;
  high: number;
}

export interface OpeOptions {
  /** Weight clip M. */
  clip?: number;
  /** Bootstrap resamples. */
  bootstrap?: number;
  /** Below this effective sample size, the report says the data cannot decide. */
  minEss?: number;
  ridge?: number;
  folds?: number;
  seed?: number;
}

export interface OpeReport {
  n: number;
  ips: Interval;
  snips: Interval;
  dr: Interval;
  /** Mean observed reward: the value of the policies that logged the data. */
  logged: Interval;
  /** DR minus logged value, paired bootstrap. */
  drGain: Interval;
  ess: number;
  maxWeight: number;
  /** Share of decisions whose weight was clipped. */
  clippedShare: number;
  enoughData: boolean;
  warnings: string[];
  options: Required<OpeOptions>;
}

export const OPE_DEFAULTS: Required<OpeOptions> = { clip: 20, bootstrap: 1000, minEss: 50, ridge: 1, folds: 2, seed: 7 };

/** Per-decision terms whose means are the estimates (so bootstrap only re-averages them). */
interface Terms {
  w: number;
  wr: number;
  dr: number;
  r: number;
}

export function evaluateOffPolicy(samples: readonly OpeSample[], options: OpeOptions = {}, fittedQ?: number[][]): OpeReport {
  const o = { ...OPE_DEFAULTS, ...options };
  const n = samples.length;
  const warnings: string[] = [];
  if (n === 0) throw new Error('no logged decisions to evaluate on');
  const q = fittedQ ?? crossFittedQ(samples, o.folds, o.ridge, createRng(o.seed));

  let sumW = 0;
  let sumW2 = 0;
  let maxWeight = 0;
  let clipped = 0;
  const terms: Terms[] = samples.map((s, i) => {
    const raw = s.target[s.action]! / s.propensity;
    sumW += raw;
    sumW2 += raw * raw;
    maxWeight = Math.max(maxWeight, raw);
    if (raw > o.clip) clipped++;
    const w = Math.min(raw, o.clip);
    const qi = q[i]!;
    let direct = 0;
    s.target.forEach((p, a) => {
      if (p > 0) direct += p * qi[a]!;
    });
    return { w, wr: w * s.reward, dr: direct + w * (s.reward - qi[s.action]!), r: s.reward };
  });
  const ess = sumW2 > 0 ? (sumW * sumW) / sumW2 : 0;
  const enoughData = ess >= o.minEss;
  if (!enoughData)
    warnings.push(`effective sample size ${ess.toFixed(1)} is below ${o.minEss}: the logged data cannot tell these policies apart; log more decisions or compare in simulation`);
  if (clipped / n > 0.05) warnings.push(`${((100 * clipped) / n).toFixed(1)}% of weights were clipped at ${o.clip}: the candidate often does what the logging policy rarely did, so estimates lean toward the reward model`);
  if (samples.some((s) => s.target[s.action]! > 0 && s.propensity < 1e-6)) warnings.push('some logged propensities are near 0: was the floor set to 0 when they were logged?');

  const stats = (t: readonly Terms[]) => {
    let w = 0;
    let wr = 0;
    let dr = 0;
    let r = 0;
    for (const x of t) {
      w += x.w;
      wr += x.wr;
      dr += x.dr;
      r += x.r;
    }
    const m = t.length;
    return { ips: wr / m, snips: w > 0 ? wr / w : 0, dr: dr / m, logged: r / m, drGain: dr / m - r / m };
  };
  const point = stats(terms);
  const rng = createRng(o.seed + 1);
  const boots: ReturnType<typeof stats>[] = [];
  const resample: Terms[] = new Array(n);
  for (let b = 0; b < o.bootstrap; b++) {
    for (let i = 0; i < n; i++) resample[i] = terms[Math.floor(rng.next() * n)]!;
    boots.push(stats(resample));
  }
  const interval = (key: keyof typeof point): Interval => {
    const values = boots.map((s) => s[key]).sort((a, b) => a - b);
    return { estimate: point[key], low: quantile(values, 0.025), high: quantile(values, 0.975) };
  };
  return {
    n,
    ips: interval('ips'),
    snips: interval('snips'),
    dr: interval('dr'),
    logged: interval('logged'),
    drGain: interval('drGain'),
    ess,
    maxWeight,
    clippedShare: clipped / n,
    enoughData,
    warnings,
    options: o,
  };
}

export interface OpeComparison {
  candidate: OpeReport;
  baseline: OpeReport;
  /** DR(candidate) - DR(baseline), paired bootstrap over the same decisions. */
  difference: Interval;
}

/**
 * Compare two target policies on the same logged decisions: one reward model (it depends only on
 * the log), each policy's DR terms, and the paired bootstrap of their difference.
 */
export function compareOffPolicy(samples: readonly OpeSample[], baselineTargets: readonly (readonly number[])[], options: OpeOptions = {}): OpeComparison {
  const o = { ...OPE_DEFAULTS, ...options };
  if (baselineTargets.length !== samples.length) throw new Error('baseline targets must match the samples one to one');
  const q = crossFittedQ(samples, o.folds, o.ridge, createRng(o.seed));
  const baselineSamples = samples.map((s, i) => ({ ...s, target: baselineTargets[i]! }));
  const candidate = evaluateOffPolicy(samples, o, q);
  const baseline = evaluateOffPolicy(baselineSamples, o, q);
  const dr = (s: OpeSample, qi: number[]) => {
    const w = Math.min(s.target[s.action]! / s.propensity, o.clip);
    let direct = 0;
    s.target.forEach((p, a) => {
      if (p > 0) direct += p * qi[a]!;
    });
    return direct + w * (s.reward - qi[s.action]!);
  };
  const diffs = samples.map((s, i) => dr(s, q[i]!) - dr(baselineSamples[i]!, q[i]!));
  const n = diffs.length;
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const rng = createRng(o.seed + 2);
  const boots: number[] = [];
  for (let b = 0; b < o.bootstrap; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += diffs[Math.floor(rng.next() * n)]!;
    boots.push(sum / n);
  }
  boots.sort((a, b) => a - b);
  return { candidate, baseline, difference: { estimate: mean(diffs), low: quantile(boots, 0.025), high: quantile(boots, 0.975) } };
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * q(x_i, a) for every sample and slot, each predicted by a model fitted without sample i's fold.
 * The model: per action, ridge regression of r on [1, features] over the samples that took it,
 *   beta_a = (X_a^T X_a + lambda I)^-1 X_a^T r_a
 * An action never taken in the training folds predicts the folds' mean reward.
 */
export function crossFittedQ(samples: readonly OpeSample[], folds: number, lambda: number, rng: Rng): number[][] {
  const n = samples.length;
  const slots = samples[0]!.target.length;
  const fold = samples.map(() => Math.floor(rng.next() * Math.max(1, folds)));
  const out: number[][] = samples.map(() => new Array<number>(slots).fill(0));
  const k = Math.max(1, Math.min(folds, n));
  for (let f = 0; f < k; f++) {
    const train = samples.filter((_, i) => k === 1 || fold[i] !== f);
    const fallback = train.length > 0 ? train.reduce((a, s) => a + s.reward, 0) / train.length : 0;
    const betas: (Float64Array | undefined)[] = [];
    for (let a = 0; a < slots; a++) {
      const rows = train.filter((s) => s.action === a);
      betas.push(rows.length > 0 ? ridge(rows.map((s) => s.features), rows.map((s) => s.reward), lambda) : undefined);
    }
    samples.forEach((s, i) => {
      if (k > 1 && fold[i] !== f) return;
      for (let a = 0; a < slots; a++) out[i]![a] = betas[a] ? predict(betas[a]!, s.features) : fallback;
    });
  }
  return out;
}

function predict(beta: Float64Array, x: ArrayLike<number>): number {
  let y = beta[0]!;
  for (let j = 0; j < x.length; j++) y += beta[j + 1]! * x[j]!;
  return y;
}

/** Ridge regression with an unpenalised intercept, solved by Cholesky on the normal equations. */
export function ridge(xs: readonly ArrayLike<number>[], ys: readonly number[], lambda: number): Float64Array {
  const d = xs[0]!.length + 1;
  const A = new Float64Array(d * d);
  const b = new Float64Array(d);
  const row = new Float64Array(d);
  xs.forEach((x, i) => {
    row[0] = 1;
    for (let j = 0; j < x.length; j++) row[j + 1] = x[j]!;
    for (let r = 0; r < d; r++) {
      b[r]! += row[r]! * ys[i]!;
      for (let c = 0; c <= r; c++) A[r * d + c]! += row[r]! * row[c]!;
    }
  });
  for (let r = 0; r < d; r++) {
    for (let c = 0; c < r; c++) A[c * d + r] = A[r * d + c]!;
    A[r * d + r]! += r === 0 ? 1e-9 : lambda;
  }
  return choleskySolve(A, b, d);
}

function choleskySolve(A: Float64Array, b: Float64Array, d: number): Float64Array {
  const L = new Float64Array(d * d);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let s = A[i * d + j]!;
      for (let k = 0; k < j; k++) s -= L[i * d + k]! * L[j * d + k]!;
      L[i * d + j] = i === j ? Math.sqrt(Math.max(s, 1e-12)) : s / L[j * d + j]!;
    }
  }
  const y = new Float64Array(d);
  for (let i = 0; i < d; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= L[i * d + k]! * y[k]!;
    y[i] = s / L[i * d + i]!;
  }
  const x = new Float64Array(d);
  for (let i = d - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < d; k++) s -= L[k * d + i]! * x[k]!;
    x[i] = s / L[i * d + i]!;
  }
  return x;
}
