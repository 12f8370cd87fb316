// The action space of a pack and the shared machinery every policy uses to turn scores into
// a logged distribution: mask, softmax, floor, sample.
import { actionKey, parseActionKey, YIELD, type Action, type Decision, type Directive } from '../core/types.ts';
import type { Pack } from '../persona/schema.ts';
import { sampleIndex, type Rng } from '../util/rng.ts';
import type { DirectorState } from './policy.ts';

/** Action slots of a pack: every persona x its strategies in file order, then yield. Stable for a pack. */
export function actionSpace(pack: Pack): string[] {
  const keys: string[] = [];
  for (const persona of pack.personas) for (const s of persona.strategies) keys.push(actionKey({ kind: 'speak', personaId: persona.id, strategy: s }));
  keys.push('yield');
  return keys;
}

/**
 * Which slots may be chosen now: the persona is enabled and still allows the strategy, did not
 * speak last (unless the human just named it), and in a 1:1 conversation only that persona
 * speaks. Yield is always allowed.
 */
export function actionMask(state: DirectorState, slots: readonly string[]): boolean[] {
  const active = new Map(state.personas.map((p) => [p.id, p]));
  const last = state.roundTurns.at(-1)?.personaId ?? lastBotPersona(state);
  return slots.map((key) => {
    const action = parseActionKey(key);
    if (action.kind === 'yield') return true;
    const persona = active.get(action.personaId);
    if (!persona || !persona.strategies.includes(action.strategy)) return false;
    if (state.directPersonaId) return persona.id === state.directPersonaId && state.roundTurns.length === 0;
    // The last speaker may open the next round only when the human named it.
    return persona.id !== last || (state.roundTurns.length === 0 && state.mentions.includes(persona.id));
  });
}

function lastBotPersona(state: DirectorState): string | undefined {
  for (let i = state.transcript.length - 1; i >= 0; i--) {
    const personaId = state.transcript[i]!.author.personaId;
    if (personaId) return personaId;
  }
  return undefined;
}

/**
 * Mix a distribution over allowed slots with a uniform floor:
 *   p'(a) = (1 - k*floor) * p(a) + floor   for the k allowed slots, 0 elsewhere,
 * so every allowed action keeps at least `floor` and the total stays 1.
 */
export function applyFloor(probabilities: readonly number[], mask: readonly boolean[], floor: number): number[] {
  const k = mask.filter(Boolean).length;
  if (k === 0) throw new Error('no allowed action: the mask excludes every slot including yield');
  const f = Math.min(floor, 1 / k);
  let total = 0;
  for (let i = 0; i < probabilities.length; i++) if (mask[i]) total += probabilities[i]!;
  return probabilities.map((p, i) => {
    if (!mask[i]) return 0;
    const base = total > 0 ? p / total : 1 / k;
    return (1 - k * f) * base + f;
  });
}

/** Softmax of scores over allowed slots (masked slots get probability 0). */
export function maskedSoftmax(scores: readonly number[], mask: readonly boolean[], temperature = 1): number[] {
  let max = -Infinity;
  for (let i = 0; i < scores.length; i++) if (mask[i]) max = Math.max(max, scores[i]! / temperature);
  const exps = scores.map((s, i) => (mask[i] ? Math.exp(s / temperature - max) : 0));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

/** One-line instruction for the speaker, from the pack's strategy text. */
export function directiveFor(state: DirectorState, action: Action): Directive | undefined {
  if (action.kind === 'yield') return undefined;
  const strategy = state.pack.strategies[action.strategy];
  const instruction = strategy ? strategy.instruction : action.strategy;
  return { personaId: action.personaId, strategy: action.strategy, instruction };
}

/** Sample from a floored distribution and package the decision. */
export function decideFrom(
  state: DirectorState,
  slots: string[],
  probabilities: number[],
  rng: Rng,
  meta: { policyId: string; policyVersion: string; reason: (action: Action) => string },
): Decision {
  const index = sampleIndex(probabilities, rng);
  const action = parseActionKey(slots[index]!);
  return {
    action,
    directive: directiveFor(state, action),
    probabilities,
    actions: slots,
    propensity: probabilities[index]!,
    policyId: meta.policyId,
    policyVersion: meta.policyVersion,
    reason: meta.reason(action),
  };
}

export { YIELD };
