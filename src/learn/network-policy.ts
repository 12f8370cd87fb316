// A director network used directly as a Policy, with the TypeScript forward pass: the trainer's
// rollouts continue with it, and a candidate can be compared before it is exported. Served
// directors go through onnxruntime (onnx-policy.ts); both compute the same probabilities.
import type { Action, Decision } from '../core/types.ts';
import { applyFloor, decideFrom } from '../director/actions.ts';
import type { DirectorState, Policy } from '../director/policy.ts';
import type { Rng } from '../util/rng.ts';
import type { DirectorFeaturizer } from './features.ts';
import type { DirectorNetwork } from './network.ts';

export class NetworkPolicy implements Policy {
  constructor(
    readonly net: DirectorNetwork,
    readonly featurizer: DirectorFeaturizer,
    readonly id = 'grpo',
    readonly version = 'training',
  ) {}

  /** The network's distribution over slots (before the floor). */
  distribution(state: DirectorState): number[] {
    const f = this.featurizer.extract(state);
    return this.net.forward(f).probabilities;
  }

  decide(state: DirectorState, rng: Rng): Decision {
    const f = this.featurizer.extract(state);
    const probabilities = applyFloor(this.net.forward(f).probabilities, f.mask, state.floor);
    return decideFrom(state, this.featurizer.slots, probabilities, rng, {
      policyId: this.id,
      policyVersion: this.version,
      reason: (a: Action) => `learned director ${this.version} chose ${a.kind === 'yield' ? 'yield' : `${a.personaId}:${a.strategy}`}`,
    });
  }
}
