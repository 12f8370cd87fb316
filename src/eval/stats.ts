// Summary statistics of the evaluation report: mean and a 95% confidence interval of the mean,
// mean +- t_{0.975, n-1} * s / sqrt(n) with the Bessel-corrected standard deviation s.

export interface Interval {
  mean: number;
  /** Half-width of the 95% interval (0 for a single value). */
  half: number;
  n: number;
}

/** Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom. */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

/** t_{0.975, df}: the table up to 30, then the Cornish-Fisher expansion around z = 1.95996 (error < 1e-4). */
export function t975(df: number): number {
  if (df < 1) return NaN;
  if (df <= 30) return T975[Math.floor(df) - 1]!;
  const z = 1.959964;
  const z3 = z ** 3;
  const z5 = z ** 5;
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df);
}

export function interval(values: readonly number[]): Interval | null {
  const n = values.length;
  if (n === 0) return null;
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / n;
  if (n === 1) return { mean, half: 0, n };
  let ss = 0;
  for (const v of values) ss += (v - mean) ** 2;
  const sd = Math.sqrt(ss / (n - 1));
  return { mean, half: (t975(n - 1) * sd) / Math.sqrt(n), n };
}
