// Random baseline: uniform over every allowed action, yield included. For evaluation.
import type { Rng } from '../util/rng.ts';
import { actionMask, actionSpace, applyFloor, decideFrom } from './actions.ts';
import type { DirectorState, Policy } from './policy.ts';

export class RandomPolicy implements Policy {
  readonly id = 'random';
  readonly version = '1';

  decide(state: DirectorState, rng: Rng) {
    const slots = actionSpace(state.pack);
    const mask = actionMask(state, slots);
    const probabilities = applyFloor(
      mask.map((m) => (m ? 1 : 0)),
      mask,
      state.floor,
    );
    return decideFrom(state, slots, probabilities, rng, { policyId: this.id, policyVersion: this.version, reason: () => 'uniform at random' });
  }
}
