// The group reward: one function scores a block of conversation after a director decision. It is
// the reward of the director's GRPO training and the collective metrics of `mascot eval`.
//
// API (stable):
//   groupReward(block: RewardBlock, options?: GroupRewardOptions): Promise<RewardBreakdown>
//     block.pack        the persona pack; block.personas the personas as tuned (default pack.personas)
//     block.context     turns before the decision, oldest first (what originality and relevance look back on)
//     block.turns       turns after the decision, in order: bot turns carry author.personaId and strategy,
//                       human turns are the person's replies
//     block.engagement  the (simulated) human's engagement over the block, in [0, 1]
//     options.weights   component weights (DEFAULT_REWARD_WEIGHTS; parseRewardWeights / rewardWeightsFromEnv)
//     options.fidelity  scorer hook (persona, context, text, strategy?) => [0, 1]; the persona reward
//                       model plugs in here; default: roleStrategyFidelity, a documented role/strategy check
//   -> { fidelity, originality, relevance, engagement, overTalk, total, turns: per-bot-turn scores }
//
// Components, each in [0, 1] (fidelity, originality and relevance are means over the block's bot turns
// and null when the block has none):
//   fidelity      does each turn fit its speaker's role (the scorer hook)
//   originality   1 - max similarity of a turn to earlier companion turns (echoes score low); a near-copy
//                 of a human turn counts too: max(0, (sim - 0.5) / 0.5), so paraphrase is fine, parroting is not
//   relevance     to what the human said last: 1 - exp(-k / 1.5), k = content words shared with that message
//   engagement    the human's response (from the simulated user, or a judge)
//   overTalk      penalty: per stretch of bot turns after one human message,
//                 p = min(1, 0.35 * (n - 1) + max(0, W - A) / A), n turns, W words, A = max(60, 2 * human words);
//                 the block's penalty is the mean over stretches that contain a turn of the block
//   total = sum_c w_c * c / sum_c w_c  over the components that are defined  -  w_overTalk * overTalk
import type { Turn } from '../core/types.ts';
import type { Pack, Persona } from '../persona/schema.ts';
import { cosine, sharedStems, termVector, type TermVector, wordCount } from './text.ts';

export interface RewardBlock {
  pack: Pack;
  /** Personas as they were tuned when the block ran; defaults to the pack's. */
  personas?: Persona[];
  /** Turns before the decision, oldest first. */
  context: Turn[];
  /** Turns after the decision, in order (bot turns with author.personaId and strategy, human replies). */
  turns: Turn[];
  /** The human's engagement over the block, in [0, 1]. */
  engagement: number;
}

/** Scores how well a text fits a persona, in [0, 1]. `context` is the conversation before the turn. */
export type FidelityScorer = (persona: Persona, context: Turn[], text: string, strategy?: string) => number | Promise<number>;

export const REWARD_COMPONENTS = ['fidelity', 'originality', 'relevance', 'engagement', 'overTalk'] as const;
export type RewardComponent = (typeof REWARD_COMPONENTS)[number];
export type RewardWeights = Record<RewardComponent, number>;

/** Engagement weighs most: the person's response is the outcome; the rest guard against collapse and echo. */
export const DEFAULT_REWARD_WEIGHTS: Readonly<RewardWeights> = Object.freeze({
  fidelity: 0.2,
  originality: 0.2,
  relevance: 0.2,
  engagement: 0.4,
  overTalk: 0.3,
});

export interface GroupRewardOptions {
  weights?: Partial<RewardWeights>;
  fidelity?: FidelityScorer;
}

export interface TurnScore {
  /** Index of the turn in block.turns. */
  index: number;
  personaId: string;
  strategy: string | null;
  fidelity: number;
  originality: number;
  /** null when no human had spoken before the turn. */
  relevance: number | null;
}

export interface RewardBreakdown {
  fidelity: number | null;
  originality: number | null;
  relevance: number | null;
  engagement: number;
  overTalk: number;
  total: number;
  turns: TurnScore[];
}

const EXTRA_TURN_COST = 0.35;
const MIN_WORD_ALLOWANCE = 60;
const NEAR_COPY = 0.5;
const RELEVANCE_SCALE = 1.5;

export async function groupReward(block: RewardBlock, options: GroupRewardOptions = {}): Promise<RewardBreakdown> {
  const weights = { ...DEFAULT_REWARD_WEIGHTS, ...options.weights };
  const personas = block.personas ?? block.pack.personas;
  const scorer = options.fidelity ?? roleStrategyFidelity(block.pack, personas);
  const all = [...block.context, ...block.turns];
  const vectors = all.map((t) => termVector(t.text));
  const offset = block.context.length;

  const turns: TurnScore[] = [];
  for (let i = offset; i < all.length; i++) {
    const turn = all[i]!;
    if (!turn.author.isBot || !turn.author.personaId) continue;
    const persona = personas.find((p) => p.id === turn.author.personaId);
    const fidelity = persona ? clamp01(await scorer(persona, all.slice(0, i), turn.text, turn.strategy)) : 0;

    let echo = 0;
    let lastHuman = -1;
    for (let j = 0; j < i; j++) {
      const sim = cosine(vectors[i]!, vectors[j]!);
      if (all[j]!.author.isBot) echo = Math.max(echo, sim);
      else {
        echo = Math.max(echo, Math.max(0, (sim - NEAR_COPY) / (1 - NEAR_COPY)));
        lastHuman = j;
      }
    }
    const relevance = lastHuman < 0 ? null : 1 - Math.exp(-sharedStems(all[lastHuman]!.text, turn.text) / RELEVANCE_SCALE);
    turns.push({ index: i - offset, personaId: turn.author.personaId, strategy: turn.strategy ?? null, fidelity, originality: 1 - echo, relevance });
  }

  const fidelity = mean(turns.map((t) => t.fidelity));
  const originality = mean(turns.map((t) => t.originality));
  const relevance = mean(turns.flatMap((t) => (t.relevance === null ? [] : [t.relevance])));
  const engagement = clamp01(block.engagement);
  const overTalk = overTalkPenalty(all, offset);

  let sum = 0;
  let norm = 0;
  for (const [c, v] of [
    ['fidelity', fidelity],
    ['originality', originality],
    ['relevance', relevance],
    ['engagement', engagement],
  ] as const) {
    if (v === null) continue;
    sum += weights[c] * v;
    norm += weights[c];
  }
  const total = (norm > 0 ? sum / norm : 0) - weights.overTalk * overTalk;
  return { fidelity, originality, relevance, engagement, overTalk, total, turns };
}

/** Mean over stretches of bot turns (after one human message) that include a turn at or after `from`. */
export function overTalkPenalty(turns: readonly Turn[], from = 0): number {
  const penalties: number[] = [];
  let humanWords = 0;
  let n = 0;
  let words = 0;
  let touchesBlock = false;
  const close = () => {
    if (n > 0 && touchesBlock) {
      const allowance = Math.max(MIN_WORD_ALLOWANCE, 2 * humanWords);
      penalties.push(Math.min(1, EXTRA_TURN_COST * (n - 1) + Math.max(0, words - allowance) / allowance));
    }
    n = 0;
    words = 0;
    touchesBlock = false;
  };
  turns.forEach((t, i) => {
    if (!t.author.isBot) {
      close();
      humanWords = wordCount(t.text);
      return;
    }
    n++;
    words += wordCount(t.text);
    if (i >= from) touchesBlock = true;
  });
  close();
  return mean(penalties) ?? 0;
}

// --- the default fidelity check -------------------------------------------------------------------

const OUT_OF_CHARACTER = /\b(as an ai|language model|i am an? (ai|assistant|bot|chatbot)|i'?m (just )?an? (ai|assistant|bot|chatbot)|as your assistant)\b/i;

/**
 * Cues that a text carries out a strategy. A cue applies when the strategy's label or instruction
 * mentions its trigger; the turn meets it when the text shows the marker.
 */
const STRATEGY_CUES: { trigger: RegExp; marker: RegExp }[] = [
  { trigger: /\b(ask|question|invite)/i, marker: /\?/ },
  { trigger: /\bfeeling/i, marker: /\b(feel\w*|sounds?|seems?|hear|must (be|feel)|hurt\w*|lonely|afraid|scared|angry|sad\w*|proud|relie\w*|heavy|hard)\b/i },
  { trigger: /\breassur/i, marker: /\b(makes sense|not alone|understandable|okay|ok to|normal|natural|of course|no wonder)\b/i },
  { trigger: /\b(say back|own words|paraphras|restat)/i, marker: /\b(so|sounds like|you'?re saying|what i hear|if i understand|you)\b/i },
  { trigger: /\bsummari[sz]/i, marker: /\b(so far|where we|we have|we'?ve|summary|recap|stands|so the|so we|agreed|open)\b/i },
  { trigger: /\b(suggest|next step)/i, marker: /\b(try|could|might|maybe|step|start|consider|how about|what if|would)\b/i },
  { trigger: /\bencourag/i, marker: /\b(you can|you could|worth|try|step|trust|capable|already|able)\b/i },
  { trigger: /\b(reframe|balanced|kinder)/i, marker: /\b(another way|could also|maybe|perhaps|what if|might|instead|also|rather|not only)\b/i },
  { trigger: /\bstrength/i, marker: /\b(shows?|strength|care|courage|took|you (did|have|are|kept))\b/i },
  { trigger: /\b(risk|assumption|trade-off)/i, marker: /\b(risk|assum\w*|trade-?off|if|cost|wrong|concern|depends)\b/i },
  { trigger: /\bdecision/i, marker: /\b(decid\w*|decision|agreed|we'?ll|going with|settled)\b/i },
  { trigger: /\baction item/i, marker: /\b(owner|owns?|by (monday|tuesday|wednesday|thursday|friday|tomorrow|next|end)|due|will|who)\b/i },
  { trigger: /\b(time|scope)\b/i, marker: /\b(time|minutes?|defer|later|park|now|scope|today|next (meeting|week))\b/i },
  { trigger: /\binformation\b/i, marker: /\b(many|often|common|usually|research|studies|known|typical\w*|can help|helps)\b/i },
];

/**
 * The documented role/strategy check used until the persona reward model exists:
 *   0 when the text breaks character (claims to be an AI or assistant, or writes another persona's line);
 *   otherwise 0.4 * role + 0.3 * realisation + 0.3 * voice, where
 *   role        1 if the strategy is one of the persona's own strategies, else 0 (a validator giving advice fails here)
 *   realisation share of the strategy's cues the text shows (a question strategy asks a question, ...);
 *               without any cue, 1 - exp(-k / 1.5) for k content words shared with the instruction
 *   voice       s_self / (s_self + max s_other): similarity of the text to this persona's own description,
 *               voice rules and examples against the most similar other persona (0.5 when indistinguishable)
 */
export function roleStrategyFidelity(pack: Pack, personas: readonly Persona[] = pack.personas): FidelityScorer {
  const profiles = new Map<string, TermVector>();
  for (const p of personas) profiles.set(p.id, profileVector(p));
  // A line opening with another persona's name means the text speaks for someone else.
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const otherLabel = new Map<string, RegExp>();
  for (const p of personas) {
    const names = personas.filter((o) => o.id !== p.id).map((o) => escape(o.displayName));
    if (names.length > 0) otherLabel.set(p.id, new RegExp(`(^|\\n)\\s*(${names.join('|')})\\s*:`, 'i'));
  }

  return (persona, _context, text, strategy) => {
    if (OUT_OF_CHARACTER.test(text) || otherLabel.get(persona.id)?.test(text)) return 0;

    const role = strategy !== undefined && persona.strategies.includes(strategy) ? 1 : 0;

    const spec = strategy ? pack.strategies[strategy] : undefined;
    let realisation = 0;
    if (spec) {
      const about = `${spec.label} ${spec.instruction}`;
      const cues = STRATEGY_CUES.filter((c) => c.trigger.test(about));
      realisation = cues.length > 0 ? cues.filter((c) => c.marker.test(text)).length / cues.length : 1 - Math.exp(-sharedStems(spec.instruction, text) / 1.5);
    }

    const v = termVector(text);
    const self = cosine(v, profiles.get(persona.id) ?? profileVector(persona));
    let other = 0;
    for (const [id, profile] of profiles) if (id !== persona.id) other = Math.max(other, cosine(v, profile));
    const voice = self + other > 0 ? self / (self + other) : 0.5;

    return 0.4 * role + 0.3 * realisation + 0.3 * voice;
  };
}

/** What a persona sounds like on paper: role, description, voice rules and example answers. */
export function personaProfileText(p: Persona): string {
  return [p.role, p.description, ...p.voice, ...p.examples.map((e) => e.response)].join('\n');
}

const profileVectors = new WeakMap<Persona, TermVector>();
function profileVector(p: Persona): TermVector {
  let v = profileVectors.get(p);
  if (!v) profileVectors.set(p, (v = termVector(personaProfileText(p))));
  return v;
}

// --- weights from configuration -----------------------------------------------------------------

export class RewardWeightsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RewardWeightsError';
  }
}

/** Parse "fidelity=0.2,engagement=0.5" (any subset; the rest keep their defaults). `source` names where it came from. */
export function parseRewardWeights(text: string, source = 'reward weights'): RewardWeights {
  const weights: RewardWeights = { ...DEFAULT_REWARD_WEIGHTS };
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z]+)\s*=\s*(\S+)$/.exec(part);
    if (!m) throw new RewardWeightsError(`${source}: "${part}" is not name=number (e.g. engagement=0.4)`);
    const name = m[1] as RewardComponent;
    if (!REWARD_COMPONENTS.includes(name)) throw new RewardWeightsError(`${source}: unknown component "${m[1]}" (known: ${REWARD_COMPONENTS.join(', ')})`);
    const value = Number(m[2]);
    if (!Number.isFinite(value) || value < 0 || value > 10) throw new RewardWeightsError(`${source}: ${name}: "${m[2]}" must be a number from 0 to 10`);
    weights[name] = value;
  }
  if (weights.fidelity + weights.originality + weights.relevance + weights.engagement === 0)
    throw new RewardWeightsError(`${source}: at least one of fidelity, originality, relevance, engagement must weigh more than 0`);
  return weights;
}

/** Weights from MASCOT_REWARD_WEIGHTS, or the defaults when it is unset. */
export function rewardWeightsFromEnv(env: NodeJS.ProcessEnv = process.env): RewardWeights {
  const raw = env.MASCOT_REWARD_WEIGHTS?.trim();
  return raw ? parseRewardWeights(raw, 'MASCOT_REWARD_WEIGHTS') : { ...DEFAULT_REWARD_WEIGHTS };
}

function mean(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
