// The offline simulated user: a latent-state simulator in the tradition of agenda-based user
// simulators (Schatzmann et al. 2007). The person has hidden needs, one per phase of helping
// (explore: to be heard, insight: to make sense of it, action: to act), met in that order; the
// meeting version reads them as: positions heard, trade-offs weighed, decisions and owners settled.
//
// State: needs n_p in [0, 1] (what is still unmet), patience in [0, 1], openness in [0, 1].
// The focus is the first phase with n_p > MET. For each companion turn of a round, with phase p
// of its strategy and relevance rel = 1 - exp(-k / 1.5) (k: content words shared with the message it answers):
//   repeated  (similarity to an earlier companion turn > REPEAT_SIMILARITY, or a strategy already used
//             this round): cost += REPEAT_COST, nothing is met
//   rushed    (p comes after the focus while n_focus > RUSH_LEVEL[gap], gap = how many phases ahead: help
//             one phase early rushes only while the focus need is high, help two phases early - solutions
//             before the person feels heard - sooner): cost += RUSH_COST * rushSensitivity, openness -= 0.1,
//             and only RUSHED_GAIN of p's need is met
//   otherwise n_p -= GAIN * gain_p * (0.5 + 0.5 rel) * (0.6 + 0.4 openness)   (profile gain_p)
//   lectured  every turn beyond the profile's turnTolerance: cost += LECTURE_COST; words beyond the
//             wordBudget: cost += min(0.2, 0.05 * (words / budget - 1))
//   a yield   answers a question with silence: cost += IGNORED_COST; otherwise the room to talk
//             meets a little of the need to be heard: n_explore -= 0.1 * gain_explore
// Then patience -= cost (+0.03 back after a round with progress > 0.2), openness += 0.3 progress - 0.5 cost,
// and engagement = clamp(0.4 + 1.2 progress - 1.5 cost) * (0.5 + 0.5 patience), progress = sum of needs met.
// The person leaves when patience reaches 0 (engagement 0) and is done when every need is at or below
// MET (engagement at least 0.8 for that last reply).
// Replies open up when met (more of the scenario's content, up to the profile's verbosity) and
// shrink or push back when rushed (the scenario's whenRushed line), lectured or repeated at.
import { PHASES, type Phase } from '../persona/schema.ts';
import { createRng, type Rng } from '../util/rng.ts';
import { sharedStems, similarity, wordCount } from '../eval/text.ts';
import { lowerFirst, type Needs, type ScenarioKind, type ScriptLine, type SimScript, type UserProfile } from './scenario.ts';
import type { RoundView, SimulatedUser, UserReply } from './user.ts';

export const USER_DYNAMICS = {
  MET: 0.2,
  /** By how many phases the help is early: [1] one phase, [2] two phases. */
  RUSH_LEVEL: [1, 0.6, 0.3] as readonly number[],
  GAIN: 0.6,
  RUSHED_GAIN: 0.1,
  REPEAT_SIMILARITY: 0.5,
  REPEAT_COST: 0.1,
  RUSH_COST: 0.15,
  LECTURE_COST: 0.08,
  IGNORED_COST: 0.12,
  YIELD_GAIN: 0.1,
} as const;

/** Everything the simulator knows about the person at a point in time (plain data, cloneable). */
export interface OfflineUserState {
  needs: Needs;
  patience: number;
  openness: number;
  /** Next line of each phase's content to say. */
  cursor: Record<Phase, number>;
  /** The person has asked for help with acting (or for a decision) already. */
  askedToAct: boolean;
  /** Times the person has been rushed (the first time they say the scenario's own line). */
  rushes: number;
  rounds: number;
}

/** What one round did to the person (for tests and reports). */
export interface RoundEffect {
  progress: number;
  cost: number;
  rushed: boolean;
  repeated: boolean;
  lectured: boolean;
  ignored: boolean;
}

export class OfflineUser implements SimulatedUser {
  readonly kind = 'offline';
  readonly state: OfflineUserState;
  private readonly rng: Rng;
  /** The effect of the latest round. */
  lastEffect: RoundEffect | undefined;

  constructor(
    readonly script: SimScript,
    readonly profile: UserProfile,
    seed: number,
    state?: OfflineUserState,
  ) {
    this.rng = createRng(seed);
    this.state = state
      ? structuredClone(state)
      : {
          needs: {
            explore: clamp01(script.needs.explore * profile.needs.explore),
            insight: clamp01(script.needs.insight * profile.needs.insight),
            action: clamp01(script.needs.action * profile.needs.action),
          },
          patience: profile.patience,
          openness: 0.5,
          cursor: { explore: 0, insight: 0, action: 0 },
          askedToAct: false,
          rushes: 0,
          rounds: 0,
        };
  }

  opening(): ScriptLine {
    return this.script.opening;
  }

  needs(): Needs {
    return { ...this.state.needs };
  }

  fork(seed: number): OfflineUser {
    return new OfflineUser(this.script, this.profile, seed, this.state);
  }

  /** The first phase whose need is not yet met. */
  focus(): Phase | undefined {
    return PHASES.find((p) => this.state.needs[p] > USER_DYNAMICS.MET);
  }

  async respond(round: RoundView): Promise<UserReply> {
    return this.react(round);
  }

  /** Synchronous core of respond(). */
  react(round: RoundView): UserReply {
    const D = USER_DYNAMICS;
    const s = this.state;
    const p = this.profile;
    s.rounds++;
    const effect: RoundEffect = { progress: 0, cost: 0, rushed: false, repeated: false, lectured: false, ignored: false };
    const earlierBot = round.history.filter((t) => t.author.isBot && !round.botTurns.includes(t));
    let words = 0;

    round.botTurns.forEach((turn, k) => {
      words += wordCount(turn.text);
      if (k >= p.turnTolerance) {
        effect.cost += D.LECTURE_COST;
        effect.lectured = true;
      }
      const repeated =
        earlierBot.some((t) => similarity(t.text, turn.text) > D.REPEAT_SIMILARITY) ||
        round.botTurns.slice(0, k).some((t) => t.strategy !== undefined && t.strategy === turn.strategy);
      earlierBot.push(turn);
      if (repeated) {
        effect.cost += D.REPEAT_COST;
        effect.repeated = true;
        return;
      }
      const phase = turn.strategy ? round.pack.strategies[turn.strategy]?.phase : undefined;
      const focus = this.focus();
      if (!phase || !focus) return; // an unknown strategy, or nothing left to meet: no effect
      const rel = 1 - Math.exp(-sharedStems(round.human.text, turn.text) / 1.5);
      let gain = D.GAIN * p.gains[phase] * (0.5 + 0.5 * rel) * (0.6 + 0.4 * s.openness);
      const gap = PHASES.indexOf(phase) - PHASES.indexOf(focus);
      if (gap > 0 && s.needs[focus] > D.RUSH_LEVEL[gap]!) {
        effect.cost += D.RUSH_COST * p.rushSensitivity;
        effect.rushed = true;
        s.openness = clamp01(s.openness - 0.1);
        gain = D.RUSHED_GAIN * s.needs[phase];
      }
      const met = Math.min(s.needs[phase], gain);
      s.needs[phase] -= met;
      effect.progress += met;
    });

    if (words > p.wordBudget) {
      effect.cost += Math.min(0.2, 0.05 * (words / p.wordBudget - 1));
      effect.lectured = true;
    }
    if (round.botTurns.length === 0) {
      if (round.human.text.includes('?')) {
        effect.cost += D.IGNORED_COST;
        effect.ignored = true;
      } else {
        const met = Math.min(s.needs.explore, D.YIELD_GAIN * p.gains.explore);
        s.needs.explore -= met;
        effect.progress += met;
      }
    }

    s.patience = clamp01(s.patience - effect.cost + (effect.progress > 0.2 ? 0.03 : 0));
    s.openness = clamp01(s.openness + 0.3 * effect.progress - 0.5 * effect.cost);
    this.lastEffect = effect;
    const engagement = clamp01(0.4 + 1.2 * effect.progress - 1.5 * effect.cost) * (0.5 + 0.5 * s.patience);

    const lead = this.script.lead;
    if (s.patience <= 0) return { lines: [{ speaker: lead, text: this.voice().leave }], engagement: 0, end: 'left' };
    const focus = this.focus();
    if (!focus) return { lines: [{ speaker: lead, text: `${this.voice().thanks} ${this.script.closing}` }], engagement: Math.max(engagement, 0.8), end: 'resolved' };
    return { lines: this.compose(focus, effect), engagement };
  }

  /** The reply: a reaction to the round, then what the person is ready to share about the focus. */
  private compose(focus: Phase, effect: RoundEffect): ScriptLine[] {
    const p = this.profile;
    const s = this.state;
    const lead = this.script.lead;
    const out: ScriptLine[] = [];
    const kind = this.script.scenario.kind;
    if (effect.rushed) return [{ speaker: lead, text: s.rushes++ === 0 ? this.script.whenRushed : pick(PUSHBACK[kind], s.rushes - 2) }];
    const voice = this.voice();
    let reaction: string | undefined;
    if (effect.lectured) reaction = voice.overwhelmed;
    else if (effect.repeated) reaction = voice.repeated;
    else if (effect.progress >= 0.25) reaction = voice.thanks;

    const sentences = effect.lectured || effect.repeated ? 1 : Math.max(1, Math.min(p.verbosity, Math.round(p.verbosity * (0.5 + s.openness))));
    const content: ScriptLine[] = [];
    if (focus === 'action' && !s.askedToAct) {
      s.askedToAct = true;
      content.push({ speaker: lead, text: kind === 'meeting' ? 'Can we decide on this now and agree who owns what?' : 'What do you think I should do?' });
    } else {
      for (let i = 0; i < sentences; i++) {
        const next = this.nextLine(focus);
        if (next) content.push(next);
      }
      // Content used up: the person circles, in a few different words, until the need is met.
      if (content.length === 0) content.push({ speaker: lead, text: pick(FALLBACK[kind][focus], s.rounds) });
    }
    // The person's own hedge, now and then, on a line of their own (not on another participant's).
    if (content[0]?.speaker.id === lead.id && this.rng.next() < 0.3 && !content[0].text.startsWith(p.voice.hedge)) {
      content[0] = { ...content[0]!, text: `${p.voice.hedge} ${lowerFirst(content[0]!.text)}` };
    }
    // One message per speaker, in order: a meeting may hear from two people.
    const parts = reaction ? [{ speaker: lead, text: reaction }, ...content] : content;
    for (const part of parts) {
      const last = out.at(-1);
      if (last && last.speaker.id === part.speaker.id) out[out.length - 1] = { speaker: last.speaker, text: `${last.text} ${part.text}` };
      else out.push(part);
    }
    return out;
  }

  private voice(): Omit<UserProfile['voice'], 'hedge'> {
    return this.script.scenario.kind === 'meeting' ? MEETING_VOICE : this.profile.voice;
  }

  private nextLine(phase: Phase): ScriptLine | undefined {
    const lines = this.script.lines[phase];
    const i = this.state.cursor[phase];
    if (i >= lines.length) return undefined;
    this.state.cursor[phase]++;
    return lines[i];
    return undefined;
  }
}

const FALLBACK: Record<ScenarioKind, Record<Phase, readonly string[]>> = {
  support: {
    explore: ["There's more to it, but that's the heart of it.", 'It just keeps coming back to me.', "I don't know, it's a lot."],
    insight: ["I'm still turning it over in my head.", "I'm trying to see it differently, but it's hard.", 'Part of it makes sense now, part of it not yet.'],
    action: ['I just want to settle what happens next.', "I'd like to leave with something concrete.", "What's the next step, then?"],
  },
  meeting: {
    explore: ['Has everyone had a chance to say where they stand?', "I'm not sure we've heard every view yet.", 'Anyone else want to weigh in before we go on?'],
    insight: ['We keep going around in circles on the trade-offs.', "I'm still not clear which risk matters most.", 'What are we actually giving up with each option?'],
    action: ['So what do we actually decide?', "Let's pin down owners and dates.", 'We need to leave with a decision today.'],
  },
};

const PUSHBACK: Record<ScenarioKind, readonly string[]> = {
  support: ["You're not listening. I'm not there yet.", 'Please slow down. I need you to hear me first.', "That's not what I need right now."],
  meeting: ["We're getting ahead of ourselves again.", "Let's not jump to conclusions before the discussion is done.", 'Too early for that, we are still discussing.'],
};

/** The chair of a meeting reacts in the team's register; the profile's own lines are for a person in a support conversation. */
const MEETING_VOICE = { thanks: 'Good, thanks.', leave: "Let's stop here and pick this up another time.", overwhelmed: 'Slow down, too many bot messages at once.', repeated: 'We just covered that.' };

function pick<T>(list: readonly T[], i: number): T {
  return list[((i % list.length) + list.length) % list.length]!;
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

