// The offline rubric scorer: a judge that needs no model, so preference data can be bootstrapped
// on any machine. It is a documented heuristic, not a language model, and everything it scores is
// labelled "offline-rubric" in the database, the training report and exports. Each criterion is
// mapped from a [0, 1] signal to the 1-5 scale as 1 + 4 * signal:
//   consistency            the group reward's role/strategy check (src/eval/group-reward.ts) for the
//                          persona's best-fitting own strategy: (max_s f(p, s) - 0.4) / 0.6, which is
//                          0.5 * strategy realisation + 0.5 * voice similarity (own profile vs others');
//                          0 when the text breaks character
//   relevance              1 - exp(-k / 1.5), k = content words shared with the human's last message
//   social_contribution    (1 - max similarity to earlier companion turns) * length fit, where length
//                          fit is 1 for 1-3 sentences and 6-70 words and falls off outside
//   emotional_expressiveness  1 - exp(-(|valence| + feeling words) / 3), AFINN-style lexicon
//   empathetic_support     0.5 * addresses the person ("you") + 0.5 * no minimising or lecturing
import { affectOf } from '../director/affect.ts';
import { roleStrategyFidelity } from '../eval/group-reward.ts';
import { similarity, sharedStems } from '../eval/text.ts';
import { tokenize } from '../learn/hashing.ts';
import type { Pack } from '../persona/schema.ts';
import { splitSentences } from './features.ts';
import type { Judge, JudgeInput, JudgedCandidate } from './judge.ts';
import { lastHumanText, toTranscript, type ContextTurn, type RubricScores } from './rubric.ts';

export const OFFLINE_RUBRIC = 'offline-rubric';

const FEELING = /\b(feel\w*|felt|hurt\w*|lonely|alone|afraid|scared|sad\w*|proud|hope\w*|heavy|hard|glad|worr\w*|grief|miss\w*|care|relie\w*|tired|frustrat\w*|angry|upset)\b/gi;
const MINIMISING = /\b(at least|calm down|get over|just relax|could be worse|everything happens for a reason|you should have|stop (worrying|being)|cheer up|don'?t be sad)\b/i;
const LECTURING = /\b(you (must|need to|have to)|always|never)\b/gi;

export class OfflineRubricJudge implements Judge {
  readonly name = OFFLINE_RUBRIC;
  private readonly fidelity = new Map<string, ReturnType<typeof roleStrategyFidelity>>();

  async score(input: JudgeInput): Promise<JudgedCandidate[]> {
    return input.candidates.map((text) => ({ scores: this.scoreOne(input.pack, input.persona.id, input.context, text) }));
  }

  scoreOne(pack: Pack, personaId: string, context: readonly ContextTurn[], text: string): RubricScores {
    const persona = pack.personas.find((p) => p.id === personaId);
    if (!persona) throw new Error(`persona "${personaId}" is not in pack "${pack.id}"`);
    let check = this.fidelity.get(pack.id);
    if (!check) this.fidelity.set(pack.id, (check = roleStrategyFidelity(pack)));
    const turns = toTranscript(context);
    let fit = 0;
    for (const s of persona.strategies) fit = Math.max(fit, Number(check(persona, turns, text, s)));
    const consistency = Math.max(0, (fit - 0.4) / 0.6);

    const human = lastHumanText(context);
    const relevance = human ? 1 - Math.exp(-sharedStems(human, text) / 1.5) : 0.5;

    let echo = 0;
    for (const t of context) if (t.isBot) echo = Math.max(echo, similarity(text, t.text));
    const words = tokenize(text).length;
    const sentences = splitSentences(text).length;
    const lengthFit = Math.min(1, words / 6) * Math.min(1, 70 / Math.max(words, 1)) * (sentences <= 3 ? 1 : 3 / sentences);
    const contribution = (1 - echo) * lengthFit;

    const affect = affectOf(text);
    const feelings = text.match(FEELING)?.length ?? 0;
    const expressiveness = 1 - Math.exp(-(Math.abs(affect.valence) + feelings) / 3);

    const addresses = /\byou(r|'re|rs)?\b/i.test(text) ? 1 : 0;
    const lectures = (text.match(LECTURING)?.length ?? 0) > 1;
    const support = 0.5 * addresses + 0.5 * (MINIMISING.test(text) || lectures ? 0 : 1);

    const to5 = (x: number) => Math.round((1 + 4 * Math.min(1, Math.max(0, x))) * 100) / 100;
    return {
      emotional_expressiveness: to5(expressiveness),
      empathetic_support: to5(support),
      consistency: to5(consistency),
      relevance: to5(relevance),
      social_contribution: to5(contribution),
    };
  }
}
