// The heuristic director: the shipped default. It scores every allowed action from the
// conversation stage and the human's affect, then samples from a sharp softmax (kept above the
// floor so its logs support off-policy evaluation).
//
// Stage follows the helping-skills order explore -> insight -> action: people are heard first,
// then helped to think, then encouraged toward one step. High distress holds the round in
// exploration; an explicit request for advice moves it to action. A named persona goes first.
// No persona twice in a row (the mask). The round yields once it has covered what it should.
import type { Action } from '../core/types.ts';
import { parseActionKey } from '../core/types.ts';
import { PHASES, type Phase } from '../persona/schema.ts';
import type { Rng } from '../util/rng.ts';
import { actionMask, actionSpace, applyFloor, decideFrom, maskedSoftmax } from './actions.ts';
import { affectOf, type Affect } from './affect.ts';
import type { DirectorState, Policy } from './policy.ts';

/** Score weights; documented so evaluation reports can be read against them. */
export const HEURISTIC_WEIGHTS = {
  phaseMatch: 2.0,
  phaseNear: 0.6,
  talkativeness: 1.0,
  mentioned: 5.0,
  repeatInRound: -2.0,
  recentStrategy: -0.8,
  spokeInRound: -0.8,
  affectFit: 1.2,
  /** Personas that have not spoken for a while get a little more of the floor (up to this). */
  quietBonus: 0.6,
  temperature: 0.45,
} as const;

const nextPhase = (p: Phase): Phase => PHASES[Math.min(PHASES.indexOf(p) + 1, PHASES.length - 1)]!;

export class HeuristicPolicy implements Policy {
  readonly id = 'heuristic';
  readonly version = '2.1';

  decide(state: DirectorState, rng: Rng) {
    const slots = actionSpace(state.pack);
    const mask = actionMask(state, slots);
    const affect = affectOf(state.human.text);
    const phase = this.targetPhase(state, affect);
    const roundLength = this.roundLength(state, affect);
    const turn = state.roundTurns.length;
    const recent = state.sessionStrategies.slice(-4);
    const W = HEURISTIC_WEIGHTS;

    const scores = slots.map((key, i) => {
      if (!mask[i]) return 0;
      const action = parseActionKey(key);
      if (action.kind === 'yield') return turn >= roundLength ? 5 : turn === 0 ? -3 : -1;
      const persona = state.personas.find((p) => p.id === action.personaId)!;
      const strategyPhase = state.pack.strategies[action.strategy]?.phase ?? 'explore';
      let s = 0;
      if (strategyPhase === phase) s += W.phaseMatch;
      else if (Math.abs(PHASES.indexOf(strategyPhase) - PHASES.indexOf(phase)) === 1) s += W.phaseNear;
      s += W.talkativeness * persona.talkativeness;
      if (state.mentions.includes(persona.id) && !state.roundTurns.some((t) => t.personaId === persona.id)) s += W.mentioned;
      if (state.roundTurns.some((t) => t.strategy === action.strategy)) s += W.repeatInRound;
      if (recent.includes(action.strategy)) s += W.recentStrategy;
      if (state.roundTurns.some((t) => t.personaId === persona.id)) s += W.spokeInRound;
      s += W.quietBonus * Math.min(3, turnsSinceSpoke(state, persona.id)) / 3;
      s += W.affectFit * affectFit(action.strategy, strategyPhase, affect);
      return s;
    });

    const probabilities = applyFloor(maskedSoftmax(scores, mask, W.temperature), mask, state.floor);
    return decideFrom(state, slots, probabilities, rng, {
      policyId: this.id,
      policyVersion: this.version,
      reason: (a: Action) =>
        a.kind === 'yield'
          ? `yield after ${turn} turn(s) (round length ${roundLength}${affect.wantsSpace ? ', the human asked for space' : ''})`
          : `phase ${phase}, distress ${affect.distress.toFixed(2)}${affect.pushback ? ', pushback: back to listening' : ''}${state.mentions.includes(a.personaId) ? `, ${a.personaId} was named` : ''}`,
    });
  }

  /** The phase this turn should serve. */
  targetPhase(state: DirectorState, affect: Affect): Phase {
    const phaseOf = (s: string): Phase => state.pack.strategies[s]?.phase ?? 'explore';
    // Count help since the person last pushed back: pushback means they did not feel heard.
    const used = this.strategiesSincePushback(state).map(phaseOf);
    const count = (p: Phase) => used.filter((u) => u === p).length;

    let base: Phase;
    if (affect.pushback || affect.wantsSpace) base = 'explore';
    else if (affect.decisionCue || affect.actionCue) base = 'action';
    else if (affect.asksForAdvice) base = count('explore') === 0 && affect.distress > 0.6 ? 'explore' : 'action';
    else if (count('explore') < 2 || (affect.distress > 0.6 && count('explore') < 3)) base = 'explore';
    else if (count('insight') < 2) base = 'insight';
    else base = 'action';

    // Later turns of a round move one phase on from the turn just taken, so the round does two
    // different jobs; but never to action before the person has been heard at least twice.
    const last = state.roundTurns.at(-1);
    if (!last) return base;
    const next = nextPhase(phaseOf(last.strategy));
    return next === 'action' && count('explore') < 2 && !affect.asksForAdvice && !affect.decisionCue && !affect.actionCue ? 'insight' : next;
  }

  /** Strategies used since the last human message that pushed back (bounded window). */
  private strategiesSincePushback(state: DirectorState): string[] {
    const strategies: string[] = [];
    for (let i = state.transcript.length - 2; i >= 0 && strategies.length < 8; i--) {
      const t = state.transcript[i]!;
      if (!t.author.isBot && affectOf(t.text).pushback) break;
      if (t.author.isBot && t.strategy) strategies.unshift(t.strategy);
    }
    return [...strategies, ...state.roundTurns.map((t) => t.strategy)];
  }

  /** How many bot turns this human message deserves before yielding. */
  roundLength(state: DirectorState, affect: Affect): number {
    if (affect.wantsSilence) return 0;
    const wordsCount = state.human.text.split(/\s+/).filter(Boolean).length;
    // Asked for space or pushed back: one listening turn. A single named persona asked a
    // question: that persona answers, the others let it be.
    if (affect.wantsSpace || affect.pushback) return 1;
    if (state.mentions.length === 1 && affect.asksQuestion) return 1;
    if (affect.feelsHeard || wordsCount <= 3) return 1;
    return Math.min(2, state.maxBotTurns);
  }
}

/** Bot turns since this persona last spoke in the visible transcript (large if never). */
function turnsSinceSpoke(state: DirectorState, personaId: string): number {
  let n = 0;
  for (let i = state.transcript.length - 1; i >= 0; i--) {
    const t = state.transcript[i]!;
    if (t.author.personaId === personaId) return n;
    if (t.author.isBot) n++;
  }
  return 3 + n;
}

/** How well a strategy fits the person's affect, in [-1, 1]. */
function affectFit(strategy: string, phase: Phase, affect: Affect): number {
  switch (strategy) {
    case 'reflection':
    case 'reassurance':
    case 'restatement':
      return affect.distress;
    case 'suggestion':
    case 'information':
      return affect.asksForAdvice ? 1 : -affect.distress;
    case 'question':
    case 'clarify':
      return affect.asksQuestion ? -0.3 : 0.3;
    case 'record-decision':
      return affect.decisionCue ? 1 : -0.3;
    case 'action-item':
      return affect.actionCue ? 1 : -0.3;
    case 'challenge':
      return affect.decisionCue ? 0.5 : 0.2;
    default:
      return phase === 'action' && affect.distress > 0.6 ? -0.5 : 0;
  }
}
