// Persona fidelity from the persona reward model (src/reward/): the calibrated probability, in
// [0, 1], that the persona's own reward head gives the turn, read after the last eight turns of
// context (as best-of-N ranks candidates). Plugs into the group reward's fidelity hook; packs
// without a model fall back to the documented role/strategy check.
import { RewardModels, shippedRewardModels } from '../reward/best-of-n.ts';
import { contextFromTranscript } from '../reward/rubric.ts';
import type { Pack } from '../persona/schema.ts';
import { roleStrategyFidelity, type FidelityScorer } from './group-reward.ts';

const CONTEXT_TURNS = 8;

export interface ModelFidelity {
  /** Which packs are scored by a model (the rest by the role/strategy check). */
  packs: string[];
  /** The scorer for a pack. */
  scorerFor(pack: Pack): FidelityScorer;
  close(): Promise<void>;
}

/**
 * Fidelity scorers from reward model files (default: the shipped models/persona-reward-*.onnx), or
 * from models already loaded (shared with best-of-N ranking; closing closes them).
 */
export function modelFidelity(source: readonly string[] | RewardModels = shippedRewardModels()): ModelFidelity {
  const models = source instanceof RewardModels ? source : new RewardModels(source);
  return {
    packs: models.packs,
    scorerFor(pack) {
      if (!models.packs.includes(pack.id)) return roleStrategyFidelity(pack);
      return async (persona, context, text) => {
        const model = await models.forPack(pack.id);
        if (!model || !model.hasPersona(persona.id)) return 0;
        const [scores] = await model.scoreTurns([{ context: contextFromTranscript(context.slice(-CONTEXT_TURNS)), text }]);
        return scores!.fidelity[model.head(persona.id)]!;
      };
    },
    close: () => models.close(),
  };
}
