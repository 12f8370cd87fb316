// Round-robin baseline: personas take turns in pack order, each cycling through its own
// strategies; it never yields early (the per-message cap ends the round). For evaluation.
import { actionKey } from '../core/types.ts';
import type { Rng } from '../util/rng.ts';
import { actionMask, actionSpace, applyFloor, decideFrom } from './actions.ts';
import type { DirectorState, Policy } from './policy.ts';

export class RoundRobinPolicy implements Policy {
  readonly id = 'round-robin';
  readonly version = '1';

  decide(state: DirectorState, rng: Rng) {
    const slots = actionSpace(state.pack);
    const mask = actionMask(state, slots);
    const order = state.personas;
    const lastSpeaker = [...state.transcript].reverse().find((t) => t.author.personaId)?.author.personaId;
    const start = lastSpeaker ? order.findIndex((p) => p.id === lastSpeaker) + 1 : 0;

    const one = slots.map(() => 0);
    for (let k = 0; k < order.length; k++) {
      const persona = order[(start + k) % order.length]!;
      // The persona's n-th turn in this session uses its n-th strategy (cyclically).
      const spoken = state.transcript.filter((t) => t.author.personaId === persona.id).length;
      const strategy = persona.strategies[spoken % persona.strategies.length]!;
      const index = slots.indexOf(actionKey({ kind: 'speak', personaId: persona.id, strategy }));
      if (index >= 0 && mask[index]) {
        one[index] = 1;
        break;
      }
    }
    if (!one.includes(1)) one[slots.length - 1] = 1; // nobody may speak: yield
    const probabilities = applyFloor(one, mask, state.floor);
    return decideFrom(state, slots, probabilities, rng, { policyId: this.id, policyVersion: this.version, reason: () => 'next in turn order' });
  }
}
