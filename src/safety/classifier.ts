// The rule-based crisis classifier. For each language: normalise the text, set quotations
// aside (src/safety/quotes.ts), run every pattern over the writer's own words, and keep a match
// unless its sentence or clause cancels it:
//
//   not-a-minor       the pattern only counts for minors and the writer did not say they are one
//   media             the sentence is about a book, film, song, game or news report
//   information       a topic pattern in a research, prevention or how-to sentence
//   not-first-person  the pattern needs the writer as subject and the sentence has none
//   negated           the clause before the match ends in a governing negation ("I'm not ..."), or
//                     the sentence is an answer that denies ("asked if I'd thought of suicide, I said no"),
//                     or others ask whether the writer is so and the next sentence denies it ("I'm not."),
//                     or the writer takes it back right after ("kill him (i'm not, he's lovely)", "Not die, just pause")
//   past              the clause (or, when the clause has no tense marker, its sentence) speaks of the
//                     past and nothing marks it current; or a date or distance plus "I'm safe now"
//                     put it behind the writer; or the writer adds that they did not act on it; or the
//                     match is a remembered event ("the night I took the overdose") and the writer is
//                     safe now or dates it, with nothing after it saying it goes on
//   fear              fear of dying, not a wish ("I'm scared I'll die in surgery"), or an intrusive thought
//                     the writer recognises and keeps at bay ("intrusive thoughts ... I know they're OCD")
//   other-object      the writer names another object right after ("ending it. The marriage, I mean")
//   accident          self-injury by accident ("cut myself shaving")
//   play              rough play ("hits me with a pillow")
//   hyperbole         a thing, not a person, is the subject ("my plants commit suicide"), for every pattern;
//                     a joke marker and/or an if-clause, or a trivial cause, as the pattern allows;
//                     a small annoyance repeated ("if they ask me one more time") or a threat over a
//                     trivial thing ("he'd kill me for eating his yoghurt") for every such pattern
//
// One surviving match makes the message `crisis`. Every match, kept or cancelled, is reported so
// `mascot safety classify --explain` can show why.
import { english } from './patterns/en.ts';
import type { CrisisCategory, CrisisPattern, Language } from './language.ts';
import { normalizeText } from './normalize.ts';
import { splitQuotations, type QuoteVoice } from './quotes.ts';

export type SuppressionReason =
  | 'not-a-minor'
  | 'media'
  | 'information'
  | 'not-first-person'
  | 'negated'
  | 'past'
  | 'fear'
  | 'other-object'
  | 'accident'
  | 'play'
  | 'hyperbole';

export interface PatternMatch {
  patternId: string;
  category: CrisisCategory;
  /** The matched words, normalised. */
  excerpt: string;
  /** Whose words: the writer's, a quotation of the writer, or a quotation of someone close. */
  voice: Exclude<QuoteVoice, 'other'> | 'own';
  language: string;
  /** Why the match was cancelled; absent for matches that count. */
  suppressedBy?: SuppressionReason;
}

export interface RuleVerdict {
  label: 'crisis' | 'ok';
  category?: CrisisCategory;
  /** Matches that count, in pattern order. */
  hits: PatternMatch[];
  /** Matches that were cancelled, with the reason. */
  suppressed: PatternMatch[];
}

/**
 * Longest text examined. A longer message is read as its first 24,000 and last 8,000 characters,
 * so a crisis statement at the end of a long message is still seen.
 */
export const MAX_CLASSIFIED_CHARS = 32_000;

interface Span {
  start: number;
  end: number;
}

/** Sentence spans: text between ., !, ? (followed by space or end) and line breaks. */
function sentenceSpans(text: string): Span[] {
  const spans: Span[] = [];
  let start = 0;
  for (const m of text.matchAll(/[.!?]+(?=\s|$)|\n+/g)) {
    const end = m.index + m[0].length;
    if (end > start) spans.push({ start, end });
    start = end;
  }
  if (start < text.length) spans.push({ start, end: text.length });
  return spans;
}

export class CrisisRules {
  private readonly clauseSplitters: Map<string, RegExp>;

  constructor(readonly languages: readonly Language[] = [english]) {
    if (languages.length === 0) throw new Error('crisis rules need at least one language');
    this.clauseSplitters = new Map(languages.map((l) => [l.code, new RegExp(l.clauseBoundary.source, 'g')]));
  }

  classify(raw: string): RuleVerdict {
    const text = raw.length > MAX_CLASSIFIED_CHARS ? `${raw.slice(0, 24_000)}\n${raw.slice(-8_000)}` : raw;
    const matches: PatternMatch[] = [];
    for (const language of this.languages) {
      const normalised = normalizeText(text, language.rewrites);
      const minorSaid = language.frames.minor.test(normalised);
      const { own, quotations } = splitQuotations(normalised, language.quotes, language.inlineQuote);
      this.scan(language, own, 'own', minorSaid, matches);
      for (const q of quotations) if (q.voice !== 'other') this.scan(language, q.text, q.voice, minorSaid, matches);
    }
    const hits = matches.filter((m) => !m.suppressedBy);
    const suppressed = matches.filter((m) => m.suppressedBy);
    if (hits.length === 0) return { label: 'ok', hits, suppressed };
    return { label: 'crisis', category: hits[0]!.category, hits, suppressed };
  }

  private scan(language: Language, text: string, voice: PatternMatch['voice'], minorSaid: boolean, out: PatternMatch[]): void {
    // Most messages match nothing; split into sentences only once a pattern matches.
    let spans: Span[] | undefined;
    for (const pattern of language.patterns) {
      // Most messages lack the words a pattern needs; skip the full expression for them.
      if (pattern.requires && !pattern.requires.test(text)) continue;
      for (const m of text.matchAll(pattern.re)) {
        if (m[0].length === 0) continue;
        const sentences = (spans ??= sentenceSpans(text));
        const at = sentences.findIndex((s) => m.index >= s.start && m.index < s.end);
        const sentence = sentences[at] ?? { start: 0, end: text.length };
        const next = at >= 0 ? sentences[at + 1] : undefined;
        const nextText = next ? text.slice(next.start, next.end) : '';
        const reason = this.suppression(language, pattern, text, sentence, nextText, m.index, m.index + m[0].length, minorSaid);
        out.push({
          patternId: pattern.id,
          // Someone close to the writer wrote the quoted words: their danger, reported by the writer.
          category: voice === 'close' ? 'third-party' : pattern.category,
          excerpt: m[0],
          voice,
          language: language.code,
          ...(reason ? { suppressedBy: reason } : {}),
        });
      }
    }
  }

  private suppression(
    language: Language,
    pattern: CrisisPattern,
    text: string,
    sentence: Span,
    nextSentence: string,
    start: number,
    end: number,
    minorSaid: boolean,
  ): SuppressionReason | undefined {
    const f = language.frames;
    const sentenceText = text.slice(sentence.start, sentence.end);
    const clause = this.clauseAround(language, sentenceText, start - sentence.start, end - sentence.start);
    const before = sentenceText.slice(clause.start, start - sentence.start);
    const clauseText = sentenceText.slice(clause.start, clause.end);
    const upToMatch = sentenceText.slice(0, start - sentence.start);

    if (pattern.minor && !minorSaid) return 'not-a-minor';
    if (f.media.test(sentenceText)) return 'media';
    // "What separates self-harm from suicidal behaviour? For my nursing essay." asks for information.
    if (pattern.topic && (f.information.test(sentenceText) || (f.purpose.test(nextSentence) && f.information.test(nextSentence)))) return 'information';
    if (f.personified.test(upToMatch)) return 'hyperbole';
    if (pattern.firstPerson && !f.firstPerson.test(sentenceText) && !f.implicitSubject.test(sentenceText)) return 'not-first-person';
    const askedAndDenied = f.askedIf.test(upToMatch) && f.denialReply.test(nextSentence);
    if (pattern.negatable && (language.negationBefore.test(before) || f.denial.test(sentenceText) || askedAndDenied || f.takenBack.test(text.slice(end, end + 120)))) return 'negated';
    if (pattern.timely && (this.isOver(f, text, sentenceText, clauseText, sentenceText.slice(clause.end)) || this.isRecalled(f, text, sentenceText, upToMatch, end - sentence.start))) return 'past';
    if (pattern.negatable && f.fearOfDying.test(sentenceText.slice(0, end - sentence.start))) return 'fear';
    if (pattern.negatable && f.unwantedThought.test(text.slice(sentence.start))) return 'fear';
    if (pattern.negatable && f.otherObject.test(text.slice(end, end + 80))) return 'other-object';
    if (pattern.accidents && f.accident.test(sentenceText) && !f.deliberate.test(sentenceText)) return 'accident';
    if (pattern.play && f.play.test(sentenceText)) return 'play';
    if (pattern.hyperbole) {
      if (f.annoyance.test(sentenceText)) return 'hyperbole';
      const joke = f.joke.test(sentenceText);
      // "... I'm going to kill him. I mean it." keeps the if-clause from excusing the statement.
      const conditional = f.conditional.test(sentenceText) && !f.earnest.test(text);
      const trivial = f.trivial.test(sentenceText);
      const hyperbole = {
        'joke-and-conditional': joke && conditional,
        'joke-or-conditional': joke || conditional,
        'trivial-cause': trivial,
        any: joke || conditional || trivial,
      }[pattern.hyperbole];
      if (hyperbole) return 'hyperbole';
    }
    return undefined;
  }

  /**
   * Is what the match says over? The clause speaks of the past and nothing marks it current; or the
   * clause has no tense marker and its sentence does ("He hit me once, years ago, and I left");
   * or the message dates it and says the writer is safe now, with nothing still going on in the
   * clause ("I was suicidal in 2019 ... I'm not there now"); or the writer adds they did not act on
   * a past wish ("I wanted to kill him ... Obviously I didn't"). A past clause followed in its
   * sentence by a relapse ("..., and I relapsed tonight") is not over.
   */
  private isOver(f: Language['frames'], text: string, sentence: string, clause: string, afterClause: string): boolean {
    if (f.present.test(clause)) {
      return f.safeNow.test(text) && f.distance.test(text) && !f.ongoing.test(clause);
    }
    // "It's been four years since I self-harmed, and I relapsed tonight": the next clause brings it back.
    if (f.past.test(clause)) return !f.relapse.test(afterClause);
    if (f.past.test(sentence) && !f.present.test(sentence)) return true;
    if (f.safeNow.test(text) && f.distance.test(text) && !f.ongoing.test(sentence)) return true;
    return f.undone.test(text);
  }

  /**
   * A remembered event rather than one at hand: the words before the match recall it ("the night I
   * took the overdose"), nothing after it in the sentence says it goes on, and the writer says they
   * are safe now or the sentence dates it ("... five years ago now. I'm doing well").
   */
  private isRecalled(f: Language['frames'], text: string, sentence: string, upToMatch: string, matchEnd: number): boolean {
    if (!f.recalled.test(upToMatch) || f.ongoing.test(sentence.slice(matchEnd))) return false;
    return f.safeNow.test(text) || f.distance.test(sentence);
  }

  /**
   * The clause of a sentence holding a match: from the clause boundary before the match start to
   * the first boundary at or after the match end (a match may itself span a comma).
   */
  private clauseAround(language: Language, sentence: string, start: number, end: number): Span {
    let clauseStart = 0;
    let clauseEnd = sentence.length;
    for (const b of sentence.matchAll(this.clauseSplitters.get(language.code)!)) {
      const bEnd = b.index + b[0].length;
      if (bEnd <= start) clauseStart = bEnd;
      else if (b.index >= end) {
        clauseEnd = b.index;
        break;
      }
    }
    return { start: clauseStart, end: clauseEnd };
  }
}
