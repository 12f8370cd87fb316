// The conversation engine: the one place conversation logic lives. Platforms hand it normalised
// events and an Outlet; it keeps a session per channel, runs the director loop until yield or the
// cap, has the chosen persona speak, paces, posts and logs every turn and decision.
import { EventEmitter } from 'node:events';
import type { ChatEvent, Decision, Turn } from '../core/types.ts';
import type { Logger } from '../log.ts';
import type { Pack, Persona } from '../persona/schema.ts';
import type { Outlet } from '../platform/platform.ts';
import type { DirectorState, Policy } from '../director/policy.ts';
import { Speaker } from '../speaker/speaker.ts';
import type { Store } from '../store/store.ts';
import { seedFrom } from '../util/rng.ts';
import { namedPersonas } from '../persona/names.ts';
import { ChannelSession } from './channel-session.ts';
import { effectivePersonas, spaceScopeOf } from './overrides.ts';
import { sleep } from '../util/sleep.ts';
import { pacingDelay } from './pacing.ts';

export interface ChannelConfig {
  enabled: boolean;
  paused: boolean;
  pack: string;
  policy: string;
  maxBotTurns: number;
}

export interface EngineOptions {
  packs: Map<string, Pack>;
  defaultPack: string;
  store: Store;
  speaker: Speaker;
  policies: Map<string, Policy>;
  log: Logger;
  /** Base seed; each channel derives its own from it. */
  seed?: number;
  /** Pause between bot turns; overrides the pack's setting when given (0 in tests). */
  pacingMs?: number;
  /** Longer human messages are truncated to this many characters, with a note. */
  maxInputChars?: number;
  /** Channels of these platforms take part without being enabled (the console, 1:1 DMs are always on). */
  alwaysOnPlatforms?: string[];
  /** When the model endpoint fails: skip the round, or post a short fallback line. */
  onGenerationFailure?: 'skip' | 'fallback';
  /**
   * Runs before the director on every human message; returning true means the message was
   * handled (e.g. a crisis response) and no round runs.
   */
  gate?: (event: ChatEvent, session: ChannelSession, outlet: Outlet) => Promise<boolean>;
}

/** Something moderators should know (persona collapse, a crisis): adapters post it to their configured alert channel. */
export interface ModeratorAlert {
  /** The conversation it is about. */
  channelKey: string;
  /** What kind of alert, e.g. "collapse", "low-fidelity". */
  kind: string;
  text: string;
  /** Link to the message it is about, when the platform has message links. */
  link?: string;
  /** Where to post it when the server's settings name a channel; otherwise the adapter's own alert channel. */
  alertChannelId?: string;
}

export interface EngineEvents {
  decision: [channelKey: string, decision: Decision, state: DirectorState];
  turn: [channelKey: string, turn: Turn];
  alert: [alert: ModeratorAlert];
}

export const channelKeyOf = (platform: string, channelId: string) => `${platform}:${channelId}`;

const FALLBACK_TEXT = "I'm having trouble finding my words right now. I'm still here, and I'm listening.";

export class Engine extends EventEmitter<EngineEvents> {
  private readonly sessions = new Map<string, ChannelSession>();
  readonly packs: Map<string, Pack>;
  readonly store: Store;
  private readonly opts: Required<Omit<EngineOptions, 'gate' | 'pacingMs'>> & Pick<EngineOptions, 'gate' | 'pacingMs'>;
  private roundCounter = 0;

  constructor(options: EngineOptions) {
    super();
    if (!options.packs.has(options.defaultPack)) throw new Error(`default pack "${options.defaultPack}" is not loaded (loaded: ${[...options.packs.keys()].join(', ')})`);
    this.packs = options.packs;
    this.store = options.store;
    this.opts = { seed: 1, maxInputChars: 4000, alwaysOnPlatforms: ['console'], onGenerationFailure: 'skip', ...options };
  }

  get policies(): Map<string, Policy> {
    return this.opts.policies;
  }

  session(channelKey: string): ChannelSession {
    let s = this.sessions.get(channelKey);
    if (!s) {
      s = new ChannelSession(channelKey, seedFrom(this.opts.seed, channelKey));
      this.restore(s);
      this.sessions.set(channelKey, s);
    }
    return s;
  }

  /** After a restart, pick the conversation up from the log. */
  private restore(session: ChannelSession): void {
    const rows = this.store.safely('restore', () => this.store.recentTurns(session.key, 20)) ?? [];
    for (const r of rows) {
      session.markSeen(r.platformId);
      session.append({
        messageId: r.platformId,
        author: { id: r.authorId, name: r.authorName, isBot: r.isBot, ...(r.personaId ? { personaId: r.personaId } : {}) },
        text: r.text,
        at: r.at,
        ...(r.strategy ? { strategy: r.strategy } : {}),
      });
      if (!r.isBot) session.humanTurnCount++;
    }
  }

  /** Channel settings with the pack's defaults filled in. */
  channelConfig(channelKey: string): ChannelConfig {
    const s = this.store.safely('settings', () => this.store.channelSettings(channelKey)) ?? {};
    const packId = typeof s.pack === 'string' && this.packs.has(s.pack) ? s.pack : this.opts.defaultPack;
    const pack = this.packs.get(packId)!;
    return {
      enabled: s.enabled === true,
      paused: s.paused === true,
      pack: packId,
      policy: typeof s.policy === 'string' ? s.policy : pack.director.policy,
      maxBotTurns: typeof s.maxBotTurns === 'number' ? s.maxBotTurns : pack.director.maxBotTurns,
    };
  }

  /**
   * Take one message from a platform. Resolves when the round it started has finished, been
   * cancelled by a newer message, or when the message needed no round.
   */
  async receive(event: ChatEvent, outlet: Outlet): Promise<void> {
    const key = channelKeyOf(event.platform, event.channelId);
    const session = this.session(key);
    if (!session.markSeen(event.messageId)) return;

    const text = event.text.trim();
    if (text.length === 0) return;

    if (event.author.isBot) {
      // Our own posts are appended when posted; other bots join the transcript but never start a round.
      if (event.author.personaId) return;
      session.append({ messageId: event.messageId, author: event.author, text, at: event.at });
      return;
    }

    // Platforms redeliver after a restart (Slack retries); a message accepted before never runs a second round.
    if (this.store.hasMessage(key, event.messageId)) return;

    // A thread follows the settings and persona overrides of its channel.
    const settingsKey = event.parentChannelId ? channelKeyOf(event.platform, event.parentChannelId) : key;
    const config = this.channelConfig(settingsKey);
    const direct = event.directPersonaId !== undefined;
    const alwaysOn = direct || event.addressed === true || this.opts.alwaysOnPlatforms.includes(event.platform);
    if (config.paused) return;
    if (!alwaysOn && !config.enabled && event.mentions.length === 0) return;

    let humanText = text;
    if (humanText.length > this.opts.maxInputChars) {
      humanText = humanText.slice(0, this.opts.maxInputChars);
      this.opts.log.info({ channel: key, chars: text.length }, 'human message truncated');
      await outlet.notice?.(`(Your message was long, so the companions read only its first ${this.opts.maxInputChars} characters.)`).catch(() => {});
    }
    const logging = !this.store.isOptedOut(event.platform, event.author.id);
    const human: Turn = { messageId: event.messageId, author: event.author, text: humanText, at: event.at };
    session.append(human);
    session.humanTurnCount++;
    if (logging) {
      this.store.ensureChannel(key, event.platform, event.channelId, event.spaceId);
      this.store.logMessage({ channelKey: key, platformId: event.messageId, authorId: event.author.id, authorName: event.author.name, isBot: false, text: humanText, at: event.at });
    }

    if (this.opts.gate && (await this.opts.gate(event, session, outlet))) return;
    if (Date.now() < session.quietUntil) return;

    // Outside enabled channels only the personas the human named take part.
    const only = !alwaysOn && !config.enabled ? event.mentions : undefined;
    await session.startRound((signal) => this.runRound({ key, settingsKey, session, event, human, outlet, config, logging, signal, only }));
  }

  private async runRound(r: {
    key: string;
    settingsKey: string;
    session: ChannelSession;
    event: ChatEvent;
    human: Turn;
    outlet: Outlet;
    config: ChannelConfig;
    logging: boolean;
    signal: AbortSignal;
    only: string[] | undefined;
  }): Promise<void> {
    const { key, session, event, human, outlet, config, signal } = r;
    const pack = this.packs.get(config.pack)!;
    // Platform mentions plus personas named in the text ("Catalyst, what do you think?").
    const mentions = [...new Set([...event.mentions, ...namedPersonas(human.text, pack.personas)])];
    const policy = this.opts.policies.get(config.policy) ?? this.opts.policies.get('heuristic')!;
    if (!this.opts.policies.has(config.policy)) this.opts.log.warn({ channel: key, policy: config.policy }, 'unknown director policy; using heuristic');
    const roundId = `${Date.now().toString(36)}-${(++this.roundCounter).toString(36)}`;
    const roundTurns: DirectorState['roundTurns'] = [];
    const pacing = this.opts.pacingMs ?? pack.director.pacingMs;

    for (let turnIndex = 0; turnIndex < config.maxBotTurns; turnIndex++) {
      if (signal.aborted) return;
      let personas = effectivePersonas(this.store, pack, r.settingsKey, event.spaceId ? spaceScopeOf(event.platform, event.spaceId) : undefined);
      if (r.only) personas = personas.filter((p) => r.only!.includes(p.id));
      const state = directorStateOf(session, { pack, personas, human, roundTurns, mentions, directPersonaId: event.directPersonaId, maxBotTurns: config.maxBotTurns });
      const decision = await policy.decide(state, session.rng);
      if (signal.aborted) return;
      this.emit('decision', key, decision, state);
      const decisionId = r.logging
        ? this.store.logDecision({ channelKey: key, roundId, triggerId: event.messageId, turnIndex, pack: pack.id, state: summarizeState(state, (t) => this.store.isOptedOut(event.platform, t.author.id)), decision, at: Date.now() })
        : undefined;
      if (decision.action.kind === 'yield' || !decision.directive) return;

      const persona = personas.find((p) => p.id === decision.directive!.personaId);
      if (!persona) return;
      void outlet.typing?.(persona).catch(() => {});
      let spoken;
      let lastTurn = false;
      try {
        spoken = await this.opts.speaker.speak({ pack, persona, personas, directive: decision.directive, transcript: session.transcript.slice(-TRANSCRIPT_WINDOW), sessionKey: key, signal });
      } catch (err) {
        if (signal.aborted) return;
        const fallback = this.opts.onGenerationFailure === 'fallback';
        this.opts.log.error({ channel: key, persona: persona.id, err: (err as Error).message }, fallback ? 'generation failed; posting the fallback line' : 'generation failed; round skipped');
        if (!fallback) return;
        // One short line from the persona, then the round ends: no further calls to a failing endpoint.
        spoken = { text: FALLBACK_TEXT, offline: true };
        lastTurn = true;
      }
      if (signal.aborted) return;
      if (!spoken.text) continue; // the model said nothing usable: no turn

      if (roundTurns.length > 0 && pacing > 0) {
        try {
          await sleep(pacingDelay(pacing, spoken.text), signal);
        } catch {
          return;
        }
      }
      if (signal.aborted) return;
      // Crash safety: the turn is logged as pending before it is posted and marked posted after,
      // so a process killed in between leaves a pending row, never a posted turn missing from the log.
      const at = Date.now();
      const rowId = r.logging
        ? this.store.logMessage({
            channelKey: key,
            platformId: `pending:${roundId}:${turnIndex}`,
            authorId: persona.id,
            authorName: persona.displayName,
            isBot: true,
            personaId: persona.id,
            text: spoken.text,
            strategy: decision.directive.strategy,
            decisionId,
            roundId,
            offlineVoice: spoken.offline,
            delivery: 'pending',
            at,
          })
        : undefined;
      let posted;
      try {
        posted = await outlet.post(persona, spoken.text, { replyTo: roundTurns.length === 0 ? event.messageId : undefined, offline: spoken.offline, signal });
      } catch (err) {
        if (rowId !== undefined) this.store.dropPending(rowId);
        throw err;
      }
      if (rowId !== undefined) this.store.markPosted(rowId, posted.messageId);
      const turn: Turn = {
        messageId: posted.messageId,
        author: { id: persona.id, name: persona.displayName, isBot: true, personaId: persona.id },
        text: spoken.text,
        at,
        strategy: decision.directive.strategy,
      };
      session.markSeen(posted.messageId);
      session.append(turn);
      roundTurns.push({ personaId: persona.id, strategy: decision.directive.strategy });
      this.emit('turn', key, turn);
      if (lastTurn) return;
    }
  }

  /** Wait until every channel is quiet (console end of input, graceful shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.idle()));
  }

  /** Cancel every running round (shutdown). */
  cancelAll(reason: string): void {
    for (const s of this.sessions.values()) s.cancel(reason);
  }
}

/** What an opted-out person's words and name become in logged decision states. */
const OPTED_OUT = '[opted out]';

/** Recent turns the director and the speakers see. */
export const TRANSCRIPT_WINDOW = 12;

/** The state a policy decides from, built before every decision of a round (the simulator builds it the same way). */
export function directorStateOf(
  session: ChannelSession,
  r: { pack: Pack; personas: Persona[]; human: Turn; roundTurns: DirectorState['roundTurns']; mentions: string[]; directPersonaId?: string; maxBotTurns: number },
): DirectorState {
  return {
    pack: r.pack,
    personas: r.personas,
    transcript: session.transcript.slice(-TRANSCRIPT_WINDOW),
    human: r.human,
    roundTurns: [...r.roundTurns],
    sessionStrategies: [...session.sessionStrategies],
    humanTurnCount: session.humanTurnCount,
    mentions: r.mentions,
    directPersonaId: r.directPersonaId,
    maxBotTurns: r.maxBotTurns,
    floor: r.pack.director.floor,
  };
}

/**
 * What a decision is logged with: enough to rebuild features for learning, not the whole pack.
 * Turns of people who opted out (`hidden`) keep their place but not their words or name.
 */
export function summarizeState(state: DirectorState, hidden: (turn: Turn) => boolean = () => false): Record<string, unknown> {
  const shown = (t: Turn) => t.author.isBot || !hidden(t);
  return {
    human: shown(state.human) ? state.human.text : OPTED_OUT,
    humanName: shown(state.human) ? state.human.author.name : OPTED_OUT,
    transcript: state.transcript.map((t) => ({ name: shown(t) ? t.author.name : OPTED_OUT, personaId: t.author.personaId ?? null, text: shown(t) ? t.text : OPTED_OUT, strategy: t.strategy ?? null })),
    roundTurns: state.roundTurns,
    sessionStrategies: state.sessionStrategies,
    humanTurnCount: state.humanTurnCount,
    mentions: state.mentions,
    directPersonaId: state.directPersonaId ?? null,
    personas: state.personas.map((p) => ({ id: p.id, talkativeness: p.talkativeness, strategies: p.strategies })),
    maxBotTurns: state.maxBotTurns,
    floor: state.floor,
  };
}
