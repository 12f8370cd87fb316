// The ablations of the MASCOT paper, for any director policy:
//   no-persona    (MASCOT-P) every companion writes from a generic assistant prompt: same director,
//                 same strategies and directives, but no persona description, voice, rules or examples
//   random-order  (MASCOT-C) the director still decides when to speak or yield and what kind of help
//                 (the phase of its strategy), but who speaks is drawn uniformly at random
import { parseActionKey, type Decision } from '../core/types.ts';
import { actionMask, actionSpace, applyFloor, decideFrom } from '../director/actions.ts';
import type { DirectorState, Policy } from '../director/policy.ts';
import type { Persona } from '../persona/schema.ts';
import type { Rng } from '../util/rng.ts';

export const ABLATIONS = ['no-persona', 'random-order'] as const;
export type Ablation = (typeof ABLATIONS)[number];

/** Persona id the generic voice writes under: unknown to any pack, so no persona-specific phrasing applies. */
export const GENERIC_VOICE_ID = 'assistant';

/** Generic assistant voices for the no-persona ablation, keyed by the persona they stand in for. */
export function genericVoices(personas: readonly Persona[]): Map<string, Persona> {
  return new Map(
    personas.map((p) => [
      p.id,
      {
        ...p,
        id: GENERIC_VOICE_ID,
        role: 'assistant',
        description: 'A helpful assistant in a group conversation.',
        voice: ['Be helpful, polite and clear.'],
        never: [],
        examples: [],
      },
    ]),
  );
}

/**
 * Random speaking order around a base policy. With the base distribution p over slots, every
 * speaking slot's mass moves to a persona drawn uniformly among those allowed to speak now, with
 * one of its allowed strategies of the same phase (any of its allowed strategies if none shares it):
 *   q(persona', s') = sum_b p(b) * 1/|personas| * 1/|strategies of persona' matching b|,   q(yield) = p(yield)
 * then the pack's floor, and a sample from q.
 */
export class RandomOrderPolicy implements Policy {
  readonly id: string;
  readonly version: string;

  constructor(private readonly base: Policy) {
    this.id = `${base.id}+random-order`;
    this.version = base.version;
  }

  async decide(state: DirectorState, rng: Rng): Promise<Decision> {
    const baseDecision = await this.base.decide(state, rng);
    const slots = actionSpace(state.pack);
    const mask = actionMask(state, slots);
    const phaseOf = (strategy: string) => state.pack.strategies[strategy]?.phase;
    const allowed = new Map<string, number[]>(); // persona -> allowed slot indexes
    slots.forEach((key, i) => {
      const a = parseActionKey(key);
      if (a.kind === 'speak' && mask[i]) allowed.set(a.personaId, [...(allowed.get(a.personaId) ?? []), i]);
    });
    const yieldIndex = slots.indexOf('yield');
    const q = slots.map(() => 0);
    baseDecision.actions.forEach((key, b) => {
      const p = baseDecision.probabilities[b] ?? 0;
      if (p <= 0) return;
      const action = parseActionKey(key);
      if (action.kind === 'yield' || allowed.size === 0) {
        q[yieldIndex]! += p;
        return;
      }
      const phase = phaseOf(action.strategy);
      for (const indexes of allowed.values()) {
        const same = indexes.filter((i) => {
          const a = parseActionKey(slots[i]!);
          return a.kind === 'speak' && phaseOf(a.strategy) === phase;
        });
        const targets = same.length > 0 ? same : indexes;
        for (const i of targets) q[i]! += p / allowed.size / targets.length;
      }
    });
    return decideFrom(state, slots, applyFloor(q, mask, state.floor), rng, {
      policyId: this.id,
      policyVersion: this.version,
      reason: (a) => (a.kind === 'yield' ? `yield (${this.base.id})` : `random speaker for ${this.base.id}'s ${phaseOf(a.strategy) ?? 'unknown'} move`),
    });
  }
}
