// Adam (Kingma & Ba, 2015) over named parameter buffers, with lazy updates for embedding tables:
// a sparse parameter only updates the rows that received gradient this step (as TensorFlow's
// LazyAdam does), so a step costs O(touched rows), not O(table).
//
//   m <- b1 m + (1 - b1) g
//   v <- b2 v + (1 - b2) g^2
//   theta <- theta - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)   [- lr * wd * theta]
//
// Weight decay, when set, is decoupled (AdamW, Loshchilov & Hutter).

export interface Param {
  name: string;
  value: Float64Array;
  grad: Float64Array;
  /**
   * Row width for a sparse (embedding) parameter; the trainer lists the rows it wrote gradient to
   * in `touched`. Dense parameters leave both unset.
   */
  rowWidth?: number;
  touched?: Set<number>;
}

export interface AdamOptions {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  /** Clip the global gradient norm (over all parameters) to this value before the step. */
  maxGradNorm?: number;
}

export interface AdamState {
  step: number;
  m: Record<string, Float64Array>;
  v: Record<string, Float64Array>;
}

export class Adam {
  private readonly m = new Map<string, Float64Array>();
  private readonly v = new Map<string, Float64Array>();
  private t = 0;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  lr: number;
  readonly weightDecay: number;
  readonly maxGradNorm: number | undefined;

  constructor(
    readonly params: Param[],
    options: AdamOptions,
  ) {
    if (!(options.lr > 0)) throw new RangeError(`learning rate must be > 0 (got ${options.lr})`);
    this.lr = options.lr;
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.eps = options.eps ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0;
    this.maxGradNorm = options.maxGradNorm;
    const names = new Set<string>();
    for (const p of params) {
      if (names.has(p.name)) throw new Error(`two parameters named "${p.name}"`);
      names.add(p.name);
      if (p.value.length !== p.grad.length) throw new Error(`parameter "${p.name}": value and grad lengths differ`);
      if (p.rowWidth !== undefined && p.value.length % p.rowWidth !== 0) throw new Error(`parameter "${p.name}": length is not a multiple of rowWidth`);
      this.m.set(p.name, new Float64Array(p.value.length));
      this.v.set(p.name, new Float64Array(p.value.length));
    }
  }

  get steps(): number {
    return this.t;
  }

  /** Global L2 norm of the current gradients (only touched rows of sparse parameters). */
  gradNorm(): number {
    let sum = 0;
    this.forEachRange((p, start, end) => {
      for (let i = start; i < end; i++) sum += p.grad[i]! * p.grad[i]!;
    });
    return Math.sqrt(sum);
  }

  /** Apply one update from the accumulated gradients. Returns the gradient norm before clipping. */
  step(): number {
    const norm = this.gradNorm();
    const scale = this.maxGradNorm !== undefined && norm > this.maxGradNorm ? this.maxGradNorm / norm : 1;
    this.t++;
    const { beta1: b1, beta2: b2, eps, lr, weightDecay } = this;
    const c1 = 1 - b1 ** this.t;
    const c2 = 1 - b2 ** this.t;
    this.forEachRange((p, start, end) => {
      const m = this.m.get(p.name)!;
      const v = this.v.get(p.name)!;
      const w = p.value;
      for (let i = start; i < end; i++) {
        const g = p.grad[i]! * scale;
        m[i] = b1 * m[i]! + (1 - b1) * g;
        v[i] = b2 * v[i]! + (1 - b2) * g * g;
        w[i] = w[i]! - lr * ((m[i]! / c1) / (Math.sqrt(v[i]! / c2) + eps) + weightDecay * w[i]!);
      }
    });
    return norm;
  }

  /** Clear gradients (only touched rows of sparse parameters) and their touched sets. */
  zeroGrad(): void {
    this.forEachRange((p, start, end) => p.grad.fill(0, start, end));
    for (const p of this.params) p.touched?.clear();
  }

  state(): AdamState {
    return { step: this.t, m: Object.fromEntries(this.m), v: Object.fromEntries(this.v) };
  }

  /** Resume from a checkpoint's optimizer state. */
  load(state: AdamState): void {
    for (const p of this.params) {
      const m = state.m[p.name];
      const v = state.v[p.name];
      if (!m || !v || m.length !== p.value.length || v.length !== p.value.length) throw new Error(`optimizer state does not match parameter "${p.name}"`);
      this.m.get(p.name)!.set(m);
      this.v.get(p.name)!.set(v);
    }
    this.t = state.step;
  }

  private forEachRange(fn: (p: Param, start: number, end: number) => void): void {
    for (const p of this.params) {
      if (p.rowWidth === undefined || p.touched === undefined) fn(p, 0, p.value.length);
      else for (const row of p.touched) fn(p, row * p.rowWidth, (row + 1) * p.rowWidth);
    }
  }
}
