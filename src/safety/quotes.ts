// Quotation handling for crisis detection. Words inside quotation marks or a quoted block
// ("> ...") are someone else's words: a lyric, a line from a book, a headline. They are taken out
// of the writer's own text, with two exceptions decided by the words just before the quotation:
// the writer quoting themselves ("I told my therapist "I want to die"") counts as the writer's
// own words, and someone close to the writer ("my friend texted me "...") counts as that person
// being in danger.

export type QuoteVoice = 'self' | 'close' | 'other';

export interface Quotation {
  text: string;
  voice: QuoteVoice;
}

export interface SplitText {
  /** The writer's own words, quotations replaced by an empty pair of quotes. */
  own: string;
  quotations: Quotation[];
}

export interface Attribution {
  self: RegExp;
  close: RegExp;
}

// Double quotes, or single quotes that open after a space and close before one (apostrophes
// inside words, as in "don't", neither open nor close a quotation). Bounded so a stray quote
// mark cannot swallow a whole long message.
const QUOTED = /"([^"\n]{1,400})"|(?<=^|[\s(\[])'((?:[^'\n]|(?<=\w)'(?=\w)){2,400})'(?=$|[\s.,!?;:)\]])/g;
const BLOCK_QUOTE = /^[ \t]*>+[ \t]?(.*)$/gm;

/**
 * Separate the writer's own words from quoted words (input already normalised). A quotation whose
 * preceding words match `inline` stays where it is, marks and all: words the writer set as their
 * own status or auto-reply ("set my out-of-office to 'indefinitely'") belong to their sentence.
 */
export function splitQuotations(text: string, attribution: Attribution, inline?: RegExp): SplitText {
  const quotations: Quotation[] = [];
  let own = text.replace(BLOCK_QUOTE, (_, body: string) => {
    quotations.push({ text: body, voice: 'other' });
    return '';
  });
  own = own.replace(QUOTED, (match, double: string | undefined, single: string | undefined, offset: number, whole: string) => {
    const body = double ?? single ?? '';
    const before = whole.slice(Math.max(0, offset - 80), offset);
    if (inline?.test(before)) return match;
    const voice: QuoteVoice = attribution.self.test(before) ? 'self' : attribution.close.test(before) ? 'close' : 'other';
    quotations.push({ text: body, voice });
    return match.startsWith('"') ? '""' : "''";
  });
  return { own, quotations };
}
