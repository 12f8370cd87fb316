// Per-state losses of the director over a masked softmax p = softmax(z) and their gradients with
// respect to the logits z (the network's backward pass takes it from there).
//
// Useful identities for a softmax over the allowed slots:
//   d p_a / d z_j     = p_a (1[j=a] - p_j)
//   d log p_a / d z_j = 1[j=a] - p_j

/** Exact KL(p || q) over slots where p > 0 (q > 0 there: both share the mask). */
export function klDivergence(p: readonly number[], q: readonly number[]): number {
  let kl = 0;
  for (let j = 0; j < p.length; j++) if (p[j]! > 0) kl += p[j]! * (Math.log(p[j]!) - Math.log(q[j]!));
  return kl;
}

export interface GrpoTerm {
  loss: number;
  /** pi_theta(a|s) / pi_old(a|s). */
  ratio: number;
  /** The clipped branch was the smaller one (no policy gradient from this sample). */
  clipped: boolean;
}

/**
 * GRPO's clipped surrogate for one sampled action `a` with group-normalised advantage A:
 *   L = -min(rho A, clip(rho, 1-eps, 1+eps) A),   rho = p(a) / pOld(a)
 * Where the unclipped branch is active, dL/dz_j = -A rho (1[j=a] - p_j); elsewhere 0.
 * Accumulates `scale * dL/dz` into `dLogits`.
 */
export function clippedSurrogate(p: readonly number[], pOldA: number, a: number, advantage: number, eps: number, dLogits: Float64Array, scale = 1): GrpoTerm {
  const rho = p[a]! / pOldA;
  const clippedRho = Math.min(Math.max(rho, 1 - eps), 1 + eps);
  const unclipped = rho * advantage;
  const clippedValue = clippedRho * advantage;
  const clipped = clippedValue < unclipped;
  if (!clipped) {
    const g = -advantage * rho * scale;
    for (let j = 0; j < p.length; j++) dLogits[j]! += g * ((j === a ? 1 : 0) - p[j]!);
  }
  return { loss: -Math.min(unclipped, clippedValue), ratio: rho, clipped };
}

/**
 * Exact KL(p || pRef) between the current and the reference policy in one state and its gradient:
 *   dKL/dz_k = p_k (log p_k - log pRef_k - KL)
 * Accumulates `scale * dKL/dz` into `dLogits`; returns the KL.
 */
export function klPenalty(p: readonly number[], pRef: readonly number[], dLogits: Float64Array, scale = 1): number {
  const kl = klDivergence(p, pRef);
  for (let k = 0; k < p.length; k++) if (p[k]! > 0) dLogits[k]! += scale * p[k]! * (Math.log(p[k]!) - Math.log(pRef[k]!) - kl);
  return kl;
}

/**
 * Cross-entropy to a target distribution (distillation of a teacher policy):
 *   L = -sum_j t_j log p_j,   dL/dz_j = p_j - t_j   (t over allowed slots, summing to 1)
 */
export function crossEntropy(p: readonly number[], target: readonly number[], dLogits: Float64Array, scale = 1): number {
  let loss = 0;
  for (let j = 0; j < p.length; j++) {
    if (target[j]! > 0) loss -= target[j]! * Math.log(Math.max(p[j]!, 1e-12));
    dLogits[j]! += scale * (p[j]! - target[j]!);
  }
  return loss;
}

/**
 * Group-normalised advantages: A_i = (R_i - mean R) / (std R + 1e-4), Bessel-corrected std.
 * A group whose rewards are all equal carries no signal: every advantage is 0.
 */
export function groupAdvantages(rewards: readonly number[]): number[] {
  const n = rewards.length;
  if (n < 2) return rewards.map(() => 0);
  const mean = rewards.reduce((a, b) => a + b, 0) / n;
  const variance = rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1);
  const std = Math.sqrt(variance);
  if (std < 1e-12) return rewards.map(() => 0);
  return rewards.map((r) => (r - mean) / (std + 1e-4));
}
