// Lexicon affect of a message: an AFINN-style word list (valence -5..+5, our own compact list
// for support and meeting talk) plus cues for what the person is asking for. Negation flips the
// sign of the next few words ("not happy" is negative), as in most lexicon scorers.

const VALENCE: Record<string, number> = {
  // distress and sadness
  alone: -2, lonely: -3, loneliness: -3, isolated: -3, abandoned: -3, sad: -2, sadness: -2, unhappy: -2, miserable: -3,
  depressed: -3, depressing: -3, hopeless: -3, helpless: -3, worthless: -4, empty: -2, numb: -2, lost: -2, grief: -3,
  grieving: -3, heartbroken: -3, crying: -2, cried: -2, cry: -2, tears: -2, hurt: -2, hurts: -2, hurting: -2, pain: -2,
  painful: -2, broken: -2, exhausted: -2, tired: -1, drained: -2, burned: -2, burnout: -3, overwhelmed: -3, overwhelming: -2,
  stressed: -2, stress: -2, stressful: -2, anxious: -2, anxiety: -2, worried: -2, worry: -2, worrying: -2, scared: -2,
  afraid: -2, fear: -2, terrified: -3, panic: -3, panicking: -3, nervous: -2, insecure: -2, ashamed: -3, shame: -3,
  guilty: -2, guilt: -2, embarrassed: -2, angry: -3, anger: -3, furious: -3, mad: -2, frustrated: -2, frustrating: -2,
  annoyed: -2, resentful: -2, jealous: -2, bitter: -2, disappointed: -2, disappointing: -2, failed: -2, failure: -3,
  fail: -2, failing: -2, rejected: -3, rejection: -3, fired: -2, laid: -1, divorce: -2, breakup: -2, dumped: -3,
  sick: -2, ill: -2, died: -3, death: -3, dead: -3, loss: -2, lose: -2, losing: -2, miss: -1, missing: -1, homesick: -2,
  stuck: -2, confused: -1, struggle: -2, struggling: -2, hard: -1, difficult: -1, awful: -3, terrible: -3, horrible: -3,
  bad: -2, worse: -2, worst: -3, hate: -3, hates: -3, unfair: -2, ignored: -2, invisible: -2, useless: -3, scary: -2,
  cant: -1, nobody: -1, never: -1, problem: -1, problems: -1, blocked: -2, late: -1, delayed: -1, risk: -1, risky: -2,
  concern: -1, concerned: -1, conflict: -2, disagree: -1, wrong: -2, bug: -1, outage: -2, behind: -1, deadline: -1,
  // hope, relief and joy
  good: 2, great: 3, happy: 3, glad: 2, relieved: 2, relief: 2, calm: 2, better: 2, hopeful: 2, hope: 2, proud: 2,
  excited: 3, exciting: 3, love: 3, loved: 3, loving: 2, grateful: 3, thankful: 2, thanks: 2, thank: 2, joy: 3,
  enjoy: 2, enjoyed: 2, fun: 2, wonderful: 4, amazing: 4, awesome: 4, fantastic: 4, nice: 2, okay: 1, ok: 1, fine: 1,
  safe: 1, supported: 2, support: 2, helpful: 2, helped: 2, confident: 2, strong: 2, brave: 2, accomplished: 2,
  success: 2, succeeded: 2, won: 3, win: 3, promoted: 3, promotion: 2, passed: 2, agree: 1, agreed: 1, decided: 1,
  done: 1, shipped: 2, progress: 2, improving: 2, improved: 2, welcome: 2, friend: 1, friends: 1, together: 1,
};

const NEGATORS = new Set(['not', 'no', 'never', "don't", 'dont', "doesn't", 'doesnt', "isn't", 'isnt', "wasn't", 'wasnt', "can't", 'cannot', "won't", 'hardly', 'without']);
const INTENSIFIERS = new Set(['so', 'very', 'really', 'extremely', 'incredibly', 'totally', 'completely', 'too']);

/** Words of a message, lower-cased, apostrophes kept inside words. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+(?:'[a-z]+)?/g) ?? [];
}

export interface Affect {
  /** Sum of word valences (negation-aware), as AFINN computes it. */
  valence: number;
  /** Distress in [0, 1]: how strongly negative the message is. */
  distress: number;
  /** The person asks what to do ("what should I do", "any advice", "how do I"). */
  asksForAdvice: boolean;
  /** The person asks a question of any kind. */
  asksQuestion: boolean;
  /** The person signals the bots should slow down or give room. */
  wantsSpace: boolean;
  /** The person asks the bots to stop altogether. */
  wantsSilence: boolean;
  /** The person signals the help landed ("thank you", "that helps"). */
  feelsHeard: boolean;
  /** The person pushes back on being rushed or not heard ("you're not listening", "I'm not there yet"). */
  pushback: boolean;
  /** Meeting cues: a decision is being made or an action is being assigned. */
  decisionCue: boolean;
  actionCue: boolean;
}

const ADVICE = /\b(what (should|can|do) i do|what would you do|any (advice|tips|ideas|suggestions)|how (do|can|should) i|should i|help me (decide|figure)|what now|next step)\b/i;
const SPACE = /(^\s*stop\b|\b(please stop|stop (talking|messaging|it|this)|that'?s enough|leave me alone|too many (messages|of you|replies)|slow down|just listen|be quiet|shut up|i need a minute|give me (a minute|some space)))/i;
const SILENCE = /^\s*(please )?(stop|enough|leave me alone|be quiet|shut up)\b/i;
const PUSHBACK = /\b(not listening|not there yet|don'?t (need|want) (advice|solutions|to plan|a plan)|before (planning|we plan|fixing)|i just want(ed)? to (share|vent|enjoy|mark|say|be heard|tell)|don'?t turn this into|that'?s not what i (meant|said)|you'?re not hearing|hear me first|not helpful|stop (fixing|trying to fix))\b/i;
const HEARD = /\b(thank(s| you)|that helps|that helped|you'?re right|makes sense|i feel (better|heard)|good point)\b/i;
const DECISION = /\b(decide|decided|decision|agree|agreed|let'?s go with|we'?ll go with|consensus|vote|final call|sign off)\b/i;
const ACTION = /\b(will (do|take|handle|own|write|send|draft|fix)|action items?|owner|who will|by (monday|tuesday|wednesday|thursday|friday|tomorrow|next week|eod)|deadline|assign)\b/i;

export function affectOf(text: string): Affect {
  const ws = words(text);
  let valence = 0;
  let negateFor = 0;
  let boost = 1;
  for (const w of ws) {
    const v = VALENCE[w.replace(/'/g, '')] ?? VALENCE[w];
    if (v !== undefined) {
      valence += (negateFor > 0 ? -v : v) * boost;
      boost = 1;
    } else if (INTENSIFIERS.has(w)) boost = 1.5;
    if (NEGATORS.has(w)) negateFor = 3;
    else if (negateFor > 0) negateFor--;
  }
  return {
    valence,
    // Saturating map: about -6 (two strong negative words) is already high distress.
    distress: valence < 0 ? 1 - Math.exp(valence / 5) : 0,
    asksForAdvice: ADVICE.test(text),
    asksQuestion: text.includes('?'),
    wantsSpace: SPACE.test(text),
    wantsSilence: SILENCE.test(text),
    feelsHeard: HEARD.test(text),
    pushback: PUSHBACK.test(text),
    decisionCue: DECISION.test(text),
    actionCue: ACTION.test(text),
  };
}
