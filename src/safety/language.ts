// What one language contributes to crisis detection: rewrites to a canonical spelling, the crisis
// patterns, and the frames that cancel a pattern (negation, the past, fiction and news, jokes).
// The classifier is language-independent; adding a language means writing one of these.
import type { Rewrite } from './normalize.ts';

export const CRISIS_CATEGORIES = ['suicide', 'self-harm', 'harm-others', 'abuse', 'third-party'] as const;
export type CrisisCategory = (typeof CRISIS_CATEGORIES)[number];

/** How a pattern can be cancelled by a joking or exaggerating sentence. */
export type HyperboleRule =
  /** Only when a joke marker and a conditional come together ("...if I hear that song again lol"). */
  | 'joke-and-conditional'
  /** By a joke marker or by a conditional ("I'll kill my brother if he eats my fries"). */
  | 'joke-or-conditional'
  /** By a trivial cause ("so embarrassed I want to die"); a joke marker alone does not cancel it. */
  | 'trivial-cause'
  /** By any of them: a joke marker, an if-clause or a trivial cause. */
  | 'any';

export interface CrisisPattern {
  /** Stable id, shown in logs and in `mascot safety classify --explain`. */
  id: string;
  category: CrisisCategory;
  /** What it recognises, in one line (printed by `mascot safety patterns`). */
  note: string;
  /** Global regular expression over normalised text. Bounded repetition only (no catastrophic backtracking). */
  re: RegExp;
  /**
   * Optional cheap pre-check (not global): words without one of which `re` cannot match, so a
   * message lacking them skips the expensive expression. Plain substrings are enough: every
   * alternative of `re` must contain one of them literally. Tested per message by the suite.
   */
  requires?: RegExp;
  /** A negation just before it cancels it ("I'm not suicidal", "I would never kill myself"). */
  negatable?: boolean;
  /** Talk about the past cancels it unless something marks it as current ("used to", "years ago"). */
  timely?: boolean;
  /** Names a subject rather than an act: research, news or how-to talk cancels it. */
  topic?: boolean;
  /** Needs a first-person sentence ("I", "my", or a sentence starting with the verb). */
  firstPerson?: boolean;
  hyperbole?: HyperboleRule;
  /** Accidents cancel it ("cut myself shaving"). */
  accidents?: boolean;
  /** Play cancels it ("my brother hits me with a pillow"). */
  play?: boolean;
  /** Only counts when the writer says they are a minor (grooming). */
  minor?: boolean;
  /** A message the pattern must flag; checked by the test suite. */
  example: string;
}

export interface LanguageFrames {
  /** Fiction, songs, games and news reports: what is described is not the writer's situation. */
  media: RegExp;
  /** Research, prevention, how-to questions: cancels `topic` patterns. */
  information: RegExp;
  past: RegExp;
  /** Marks a past-sounding clause as current ("again", "still", "tonight"). */
  present: RegExp;
  accident: RegExp;
  /** Marks self-injury as deliberate ("on purpose"): accidents no longer cancel. */
  deliberate: RegExp;
  play: RegExp;
  joke: RegExp;
  conditional: RegExp;
  trivial: RegExp;
  minor: RegExp;
  firstPerson: RegExp;
  /** An answer that denies, in the sentence: "asked if I'm having thoughts of suicide and I said no". */
  denial: RegExp;
  /** The message says the writer is safe now ("I'm in a good place now", "now I run a peer group"). */
  safeNow: RegExp;
  /** A date or distance that puts an experience behind the writer ("in 2019", "that was 2015", "ten years today since"). */
  distance: RegExp;
  /** Markers of something still going on; a safe-now marker does not outweigh them ("again", "tonight"). */
  ongoing: RegExp;
  /** It has come back: after a past clause, "again", "relapsed", "tonight" make the sentence current. */
  relapse: RegExp;
  /** A past wish, then the writer saying they did not act on it: "I wanted to kill him ... Obviously I didn't". */
  undone: RegExp;
  /** Fear of dying, ending where the match ends: "I'm scared I'll die" is not a wish to. */
  fearOfDying: RegExp;
  /** Just after a match, the writer names another object: "ending it. The marriage, I mean". */
  otherObject: RegExp;
  /** A sentence that only gives the purpose of the one before ("For my nursing essay."). */
  purpose: RegExp;
  /** A small annoyance repeated or a threat over a trivial thing: hyperbole even without a joke marker. */
  annoyance: RegExp;
  /** The writer insists they mean it: an if-clause no longer makes the statement hyperbole. */
  earnest: RegExp;
  /** A sentence that starts with its verb has an implicit first-person subject ("Feeling suicidal tonight"). */
  implicitSubject: RegExp;
  /** Ends where a match starts: someone asks whether the writer is what the match says ("people keep asking if I'm "). */
  askedIf: RegExp;
  /** The sentence after such a question: a bare denial ("I'm not."). */
  denialReply: RegExp;
  /** Ends where a match starts: a remembered past event ("the night I took the "), not one at hand. */
  recalled: RegExp;
  /** An unwanted, recognised intrusive thought: OCD, therapy, standing well back from the platform. */
  unwantedThought: RegExp;
  /** Ends where a match starts: a thing, not a person, is the subject ("my plants ", "I swear they "). */
  personified: RegExp;
  /**
   * Starts where a match ends: the writer takes it back at once, with a denial in brackets ("(i'm
   * not, he's lovely)") or by saying it is not death they mean ("... like hibernate. Not die, just
   * pause everything").
   */
  takenBack: RegExp;
}

export interface Language {
  code: string;
  name: string;
  rewrites: readonly Rewrite[];
  patterns: readonly CrisisPattern[];
  /** Tested against the clause text before a match: does it end in a negation that governs the match? */
  negationBefore: RegExp;
  /** Splits a sentence into clauses (negation and tense do not cross these). */
  clauseBoundary: RegExp;
  frames: LanguageFrames;
  quotes: {
    /** Text before a quotation saying the writer said it ("I told her", "I keep telling myself"). */
    self: RegExp;
    /** Text before a quotation saying someone close to the writer said it ("my friend texted me"). */
    close: RegExp;
  };
  /** Ends where a quotation starts: the writer set its words as their own status or auto-reply, so they stay in the sentence. */
  inlineQuote?: RegExp;
  /** Words that make a message worth a second look by the model-backed check. */
  watchWords: RegExp;
}

/**
 * Build a global, case-sensitive RegExp from a template whose `{name}` parts are replaced by the
 * given fragments (each wrapped in a non-capturing group), so shared vocabulary is written once.
 */
export function template(fragments: Record<string, string>): (source: string, flags?: string) => RegExp {
  return (source, flags = 'g') =>
    new RegExp(
      source.replace(/\{([a-zA-Z]+)\}/g, (_, name: string) => {
        const fragment = fragments[name];
        if (fragment === undefined) throw new Error(`unknown pattern fragment {${name}}`);
        return `(?:${fragment})`;
      }),
      flags,
    );
}
