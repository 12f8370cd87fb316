// Text normalisation before crisis patterns run: one canonical spelling for the many ways people
// type the same words, so each pattern is written once. Language-independent steps here; each
// language adds its own rewrites (slang, contractions) in its pattern module.

/** A rewrite applied to lower-cased text: every match of `from` becomes `to`. */
export type Rewrite = readonly [from: RegExp, to: string];

// Zero-width and formatting characters people (or spam) put inside words to dodge filters.
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]/g;
const SINGLE_QUOTES = /[\u2018\u2019\u201a\u201b\u2032\u00b4`]/g;
const DOUBLE_QUOTES = /[\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb]/g;

/**
 * Lower-case, fold compatibility forms (full-width letters, ligatures), straighten quotes, drop
 * invisible characters, squeeze letters repeated three or more times ("sooo" -> "so",
 * "dieeee" -> "die") and collapse spaces; then apply the language's rewrites in order.
 */
export function normalizeText(raw: string, rewrites: readonly Rewrite[] = []): string {
  let text = raw
    .normalize('NFKC')
    .replace(INVISIBLE, '')
    .replace(SINGLE_QUOTES, "'")
    .replace(DOUBLE_QUOTES, '"')
    .toLowerCase()
    .replace(/([a-z])\1{2,}/g, '$1')
    .replace(/[ \t\u00a0]+/g, ' ');
  for (const [from, to] of rewrites) text = text.replace(from, to);
  return text.trim();
}
