// A simulated conversation: a simulated user on one side, the real director policy and Speaker on
// the other. The transcript is kept by a ChannelSession and every director state is built by the
// engine's own directorStateOf, so the director sees exactly what it sees in a channel. What the
// engine adds around that (platforms, pacing, barge-in, the store) has no part in a simulation.
// Time is a simulated clock, so a run is reproducible bit for bit from its seeds.
import { actionKey, type Action, type Decision, type Turn } from '../core/types.ts';
import { actionMask, actionSpace, directiveFor } from '../director/actions.ts';
import type { DirectorState, Policy } from '../director/policy.ts';
import { namedPersonas } from '../persona/names.ts';
import type { Pack, Persona } from '../persona/schema.ts';
import { ChannelSession } from '../session/channel-session.ts';
import { directorStateOf, TRANSCRIPT_WINDOW } from '../session/engine.ts';
import type { Speaker } from '../speaker/speaker.ts';
import type { ScriptLine } from './scenario.ts';
import type { Ending, SimulatedUser, UserReply } from './user.ts';

/** Simulated time: the first message at a fixed instant, then SECONDS_PER_TURN per turn. */
const EPOCH = Date.UTC(2025, 0, 6, 9, 0, 0);
const SECONDS_PER_TURN = 20;

export interface ConversationSetup {
  pack: Pack;
  /** Personas as the director sees them (default: the pack's enabled ones). */
  personas?: Persona[];
  /** Who actually writes each persona's turns, when not the persona itself (the no-persona ablation). */
  voices?: Map<string, Persona>;
  user: SimulatedUser;
  policy: Policy;
  speaker: Speaker;
  /** Key of the conversation: the channel key and the voice's session key. */
  key: string;
  /** Seeds the director's sampling (the session's random stream, as in a channel). */
  seed: number;
  /** Bot turns per human message at most (default: the pack's). */
  maxBotTurns?: number;
}

/** A director decision taken in the simulation, with the state it was taken in. */
export interface SimDecision {
  state: DirectorState;
  decision: Decision;
}

/** Everything needed to continue a conversation from a point (plain data plus the user). */
export interface ConversationPoint {
  history: Turn[];
  /** The human message that started the current round. */
  human: Turn;
  roundTurns: DirectorState['roundTurns'];
  /** Decisions already taken in the round (an empty turn takes a decision but adds no round turn). */
  roundDecisions: number;
  /** Set when the history is only the recent part (a logged state): the session's strategy memory and human message count. */
  sessionStrategies?: string[];
  humanTurnCount?: number;
  /** The simulated person as they are at this point. */
  user: SimulatedUser;
}

export class SimConversation {
  readonly session: ChannelSession;
  /** The whole conversation, oldest first (the session keeps only its recent part). */
  readonly history: Turn[] = [];
  readonly decisions: SimDecision[] = [];
  /** The person's engagement after each round. */
  readonly engagements: number[] = [];
  ended: Ending | undefined;
  /** Why the conversation stopped early, when a part of it failed. */
  failure: string | undefined;
  readonly personas: Persona[];
  readonly maxBotTurns: number;
  private human: Turn | undefined;
  private roundTurns: DirectorState['roundTurns'] = [];
  private roundDecisions = 0;
  private roundOpen = false;

  constructor(private readonly setup: ConversationSetup) {
    this.session = new ChannelSession(setup.key, setup.seed);
    this.personas = setup.personas ?? setup.pack.personas.filter((p) => p.enabled);
    this.maxBotTurns = setup.maxBotTurns ?? setup.pack.director.maxBotTurns;
  }

  /** Start with the person's opening message. */
  static open(setup: ConversationSetup): SimConversation {
    const c = new SimConversation(setup);
    c.say([setup.user.opening()]);
    return c;
  }

  /** Continue from a recorded point (the user given there is used as is: fork it first to keep the original). */
  static resume(setup: ConversationSetup, point: ConversationPoint): SimConversation {
    const c = new SimConversation({ ...setup, user: point.user });
    for (const t of point.history) c.append(t);
    if (point.sessionStrategies) c.session.sessionStrategies.splice(0, c.session.sessionStrategies.length, ...point.sessionStrategies);
    if (point.humanTurnCount !== undefined) c.session.humanTurnCount = point.humanTurnCount;
    c.human = point.human;
    c.roundTurns = [...point.roundTurns];
    c.roundDecisions = point.roundDecisions;
    c.roundOpen = true;
    return c;
  }

  /** The current point, for starting rollouts from it later (forks the user). */
  point(userSeed: number): ConversationPoint {
    if (!this.human) throw new Error('the conversation has not started');
    return { history: [...this.history], human: this.human, roundTurns: [...this.roundTurns], roundDecisions: this.roundDecisions, user: this.setup.user.fork(userSeed) };
  }

  /** The state the director decides from now. */
  state(): DirectorState {
    if (!this.human) throw new Error('the conversation has not started');
    return directorStateOf(this.session, {
      pack: this.setup.pack,
      personas: this.personas,
      human: this.human,
      roundTurns: this.roundTurns,
      mentions: namedPersonas(this.human.text, this.personas),
      maxBotTurns: this.maxBotTurns,
    });
  }

  /**
   * Run the director loop of the current round until it yields or reaches the cap. `forced` replaces
   * the policy's first decision (a rollout's first action); it must be allowed in the current state.
   * `onDecision` sees every decision before it is carried out.
   */
  async runRound(options: { forced?: Action; onDecision?: (state: DirectorState) => void } = {}): Promise<void> {
    if (!this.roundOpen) throw new Error('no open round: the person has not spoken since the last round');
    let forced = options.forced;
    while (this.roundDecisions < this.maxBotTurns) {
      const state = this.state();
      options.onDecision?.(state);
      const decision = forced ? forcedDecision(state, forced) : await this.setup.policy.decide(state, this.session.rng);
      forced = undefined;
      this.roundDecisions++;
      this.decisions.push({ state, decision });
      if (decision.action.kind === 'yield' || !decision.directive) break;
      const persona = this.personas.find((p) => p.id === decision.directive!.personaId);
      if (!persona) break;
      const voice = this.setup.voices?.get(persona.id) ?? persona;
      const voices = this.personas.map((p) => this.setup.voices?.get(p.id) ?? p);
      const spoken = await this.setup.speaker.speak({
        pack: this.setup.pack,
        persona: voice,
        personas: voices,
        directive: decision.directive,
        transcript: this.session.transcript.slice(-TRANSCRIPT_WINDOW),
        sessionKey: this.setup.key,
      });
      if (!spoken.text) continue; // as in a channel: an empty turn is no turn, and the round goes on
      this.roundTurns.push({ personaId: persona.id, strategy: decision.directive.strategy });
      this.append({
        messageId: `${this.setup.key}#${this.history.length}`,
        author: { id: persona.id, name: persona.displayName, isBot: true, personaId: persona.id },
        text: spoken.text,
        at: this.clock(),
        strategy: decision.directive.strategy,
      });
    }
    this.roundOpen = false;
  }

  /** The person reacts to the round just run; their message opens the next round unless the conversation ended. */
  async reply(): Promise<UserReply> {
    if (this.roundOpen || !this.human) throw new Error('run the round before asking for the reply');
    const botTurns = this.history.slice(this.history.indexOf(this.human) + 1).filter((t) => t.author.isBot);
    const reply = await this.setup.user.respond({ pack: this.setup.pack, history: [...this.history], human: this.human, botTurns });
    this.engagements.push(reply.engagement);
    if (reply.lines.length > 0) this.say(reply.lines);
    if (reply.end) {
      this.ended = reply.end;
      this.roundOpen = false;
    }
    return reply;
  }

  /** Turns since (and including) the given history index. */
  since(index: number): Turn[] {
    return this.history.slice(index);
  }

  private say(lines: ScriptLine[]): void {
    for (const line of lines) {
      const turn: Turn = { messageId: `${this.setup.key}#${this.history.length}`, author: { id: line.speaker.id, name: line.speaker.name, isBot: false }, text: line.text, at: this.clock() };
      this.append(turn);
      this.human = turn;
    }
    this.roundTurns = [];
    this.roundDecisions = 0;
    this.roundOpen = true;
  }

  private append(turn: Turn): void {
    this.history.push(turn);
    this.session.append(turn);
    if (!turn.author.isBot) this.session.humanTurnCount++;
  }

  private clock(): number {
    return EPOCH + this.history.length * SECONDS_PER_TURN * 1000;
  }
}

/** A decision for an action chosen from outside the policy (probability 1, for rollouts). */
export function forcedDecision(state: DirectorState, action: Action): Decision {
  const slots = actionSpace(state.pack);
  const key = actionKey(action);
  const index = slots.indexOf(key);
  if (index < 0) throw new Error(`action "${key}" is not in the action space of pack "${state.pack.id}"`);
  if (!actionMask(state, slots)[index]) throw new Error(`action "${key}" is not allowed in this state (the persona is not active, spoke last, or lacks the strategy)`);
  return {
    action,
    directive: directiveFor(state, action),
    probabilities: slots.map((_, i) => (i === index ? 1 : 0)),
    actions: slots,
    propensity: 1,
    policyId: 'forced',
    policyVersion: '1',
    reason: 'forced first action of a rollout',
  };
}
