// Small measuring helpers for `mascot bench`: percentiles of repeated timings.

export interface Timing {
  medianUs: number;
  p99Us: number;
  n: number;
}

export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

/** Time `fn` `n` times (after `warmup` untimed calls); microseconds. */
export async function timeEach(n: number, fn: (i: number) => unknown, warmup = Math.min(200, n)): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const samples: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    samples[i] = Number(process.hrtime.bigint() - t0) / 1000;
  }
  samples.sort((a, b) => a - b);
  return { medianUs: percentile(samples, 0.5), p99Us: percentile(samples, 0.99), n };
}

/** Peak resident set size of this process so far, in MiB. */
export function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}
