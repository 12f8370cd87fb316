// Director features: what the learned director sees of a conversation. Versioned: a model
// records FEATURE_VERSION and its dense layout; a loader refuses a model built for other features.
//
// Sparse part (embedding-bag input): signed hashed word uni/bi-grams in namespaces
//   h  the human message that started the round
//   b  the bot turns since that message, or else the bot turn just before it
//   p  the human's previous message (is this a follow-up?)
//   k  a constant feature, so every bag is non-empty
// Dense part: lexicon affect (AFINN-style), round and session state, and per-strategy and
// per-persona state of this pack (so the dense layout is fixed per pack, like the action slots).
import { actionMask, actionSpace } from '../director/actions.ts';
import { affectOf } from '../director/affect.ts';
import type { DirectorState } from '../director/policy.ts';
import { PHASES, type Pack } from '../persona/schema.ts';
import { FeatureHasher, type HashedBag } from './hashing.ts';

export const FEATURE_VERSION = 'director-features/1';

/** Default number of hash buckets (embedding rows); a power of two. */
export const DEFAULT_BUCKETS = 1 << 15;

const HUMAN_TOKENS = 48;
const BOT_TOKENS = 32;
const PREVIOUS_TOKENS = 24;
/** Recent session strategies that count as "just used". */
const RECENT = 4;
/** Session strategies whose phases describe where the conversation is. */
const PHASE_WINDOW = 8;

export interface DirectorFeatures {
  ids: Int32Array;
  weights: Float32Array;
  dense: Float32Array;
  /** Allowed action slots now, in slot order. */
  mask: boolean[];
}

/** What a model must agree with to be served for a pack (the bucket count is read from the model). */
export interface FeatureLayout {
  version: string;
  buckets: number;
  denseNames: string[];
  actions: string[];
}

export class DirectorFeaturizer {
  readonly slots: string[];
  readonly denseNames: string[];
  private readonly hasher: FeatureHasher;
  private readonly strategies: string[];
  private readonly personaIds: string[];
  private readonly phaseOf: Map<string, string>;

  constructor(
    readonly pack: Pack,
    readonly buckets: number = DEFAULT_BUCKETS,
  ) {
    this.hasher = new FeatureHasher({ buckets });
    this.slots = actionSpace(pack);
    this.strategies = Object.keys(pack.strategies);
    this.personaIds = pack.personas.map((p) => p.id);
    this.phaseOf = new Map(Object.entries(pack.strategies).map(([id, s]) => [id, s.phase]));
    this.denseNames = [
      'bias',
      'round_turn_0',
      'round_turn_1',
      'round_turn_2plus',
      'round_progress',
      'human_turns_log',
      'first_message',
      'valence',
      'distress',
      'asks_advice',
      'asks_question',
      'wants_space',
      'feels_heard',
      'decision_cue',
      'action_cue',
      'words_log',
      'short_message',
      'mentions_any',
      'direct',
      ...PHASES.map((p) => `session_phase_${p}`),
      ...PHASES.map((p) => `last_round_phase_${p}`),
      ...this.strategies.flatMap((s) => [`in_round:${s}`, `recent:${s}`]),
      ...this.personaIds.flatMap((p) => [`spoke_in_round:${p}`, `mentioned:${p}`, `talkativeness:${p}`, `active:${p}`, `spoke_last:${p}`]),
    ];
  }

  get layout(): FeatureLayout {
    return { version: FEATURE_VERSION, buckets: this.buckets, denseNames: this.denseNames, actions: this.slots };
  }

  extract(state: DirectorState): DirectorFeatures {
    return { ...this.sparse(state), dense: this.dense(state), mask: actionMask(state, this.slots) };
  }

  private sparse(state: DirectorState): { ids: Int32Array; weights: Float32Array } {
    const bag: HashedBag = { ids: [], weights: [] };
    this.hasher.add(bag, 'k', 'bias');
    this.hasher.addText(bag, 'h', state.human.text, { maxTokens: HUMAN_TOKENS });

    // Walk back from the end: bot turns since the human's message, then what came before it.
    const t = state.transcript;
    let at = t.length - 1;
    while (at >= 0 && t[at]!.messageId !== state.human.messageId) at--;
    const since = at >= 0 ? t.slice(at + 1).filter((turn) => turn.author.isBot) : [];
    let botText = since.map((turn) => turn.text).join(' ');
    let previousHuman: string | undefined;
    for (let j = at - 1; j >= 0 && (previousHuman === undefined || botText === ''); j--) {
      const turn = t[j]!;
      if (turn.author.isBot && botText === '') botText = turn.text;
      if (!turn.author.isBot && previousHuman === undefined) previousHuman = turn.text;
    }
    this.hasher.addText(bag, 'b', botText, { maxTokens: BOT_TOKENS });
    if (previousHuman !== undefined) this.hasher.addText(bag, 'p', previousHuman, { maxTokens: PREVIOUS_TOKENS });
    return { ids: Int32Array.from(bag.ids), weights: Float32Array.from(bag.weights) };
  }

  private dense(state: DirectorState): Float32Array {
    const out = new Float32Array(this.denseNames.length);
    let i = 0;
    const put = (v: number | boolean) => {
      out[i++] = typeof v === 'boolean' ? (v ? 1 : 0) : v;
    };
    const affect = affectOf(state.human.text);
    const turn = state.roundTurns.length;
    const words = state.human.text.split(/\s+/).filter(Boolean).length;

    put(1);
    put(turn === 0);
    put(turn === 1);
    put(turn >= 2);
    put(state.maxBotTurns > 0 ? turn / state.maxBotTurns : 1);
    put(Math.log1p(state.humanTurnCount) / 3);
    put(state.humanTurnCount <= 1);
    put(Math.max(-10, Math.min(10, affect.valence)) / 5);
    put(affect.distress);
    put(affect.asksForAdvice);
    put(affect.asksQuestion);
    put(affect.wantsSpace);
    put(affect.feelsHeard);
    put(affect.decisionCue);
    put(affect.actionCue);
    put(Math.log1p(words) / 5);
    put(words <= 3);
    put(state.mentions.length > 0);
    put(state.directPersonaId !== undefined);

    const window = state.sessionStrategies.slice(-PHASE_WINDOW).map((s) => this.phaseOf.get(s));
    for (const p of PHASES) put(window.filter((x) => x === p).length / PHASE_WINDOW);
    const lastRound = state.roundTurns.at(-1);
    const lastPhase = lastRound ? this.phaseOf.get(lastRound.strategy) : undefined;
    for (const p of PHASES) put(lastPhase === p);

    const recent = state.sessionStrategies.slice(-RECENT);
    for (const s of this.strategies) {
      put(state.roundTurns.some((r) => r.strategy === s));
      put(recent.includes(s));
    }

    const lastSpeaker = lastRound?.personaId ?? state.transcript.at(-1)?.author.personaId;
    for (const id of this.personaIds) {
      const persona = state.personas.find((p) => p.id === id);
      put(state.roundTurns.some((r) => r.personaId === id));
      put(state.mentions.includes(id));
      put(persona?.talkativeness ?? 0);
      put(persona !== undefined);
      put(lastSpeaker === id);
    }
    return out;
  }
}

/** Why a model's layout cannot serve this featurizer's pack, or undefined when it can. */
export function layoutMismatch(model: FeatureLayout, expected: FeatureLayout): string | undefined {
  if (model.version !== expected.version)
    return `it was trained with features "${model.version}" but this build extracts "${expected.version}"; retrain it with \`mascot train director\``;
  if (model.actions.join('|') !== expected.actions.join('|'))
    return `its action slots (${model.actions.length}: ${model.actions.join(', ')}) differ from the pack's (${expected.actions.length}: ${expected.actions.join(', ')}); the personas or their strategies changed since training`;
  if (model.denseNames.join('|') !== expected.denseNames.join('|')) return `its dense feature layout (${model.denseNames.length} features) differs from the pack's (${expected.denseNames.length})`;
  return undefined;
}
