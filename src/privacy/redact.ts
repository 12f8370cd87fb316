// Redaction of personal details in text that leaves the live system (training exports, reports):
// e-mail addresses, phone numbers, user/role/channel mentions (Discord and Slack markup and plain
// @handles), links, and optionally known names of people. Each is replaced by a typed placeholder
// such as "[email]" so the text stays readable and a model trained on it learns the shape, not the data.
//
// Detection is deliberately greedy on the private kinds (a false "[phone]" costs little, a leaked
// number costs a lot) but leaves dates, times, years, amounts and version numbers alone.

export type PersonalDetailKind = 'email' | 'phone' | 'mention' | 'channel' | 'link' | 'name';

export interface PersonalDetail {
  kind: PersonalDetailKind;
  /** Start offset (UTF-16 index) in the original text. */
  start: number;
  /** End offset, exclusive. */
  end: number;
}

export interface RedactOptions {
  /**
   * Names of people to replace (e.g. the authors of a conversation). Matched as whole words,
   * case-insensitively; replaced by the value of the map entry or "[name]" for a plain list.
   */
  names?: readonly string[] | ReadonlyMap<string, string>;
}

export const PLACEHOLDER: Record<PersonalDetailKind, string> = {
  email: '[email]',
  phone: '[phone]',
  mention: '[user]',
  channel: '[channel]',
  link: '[link]',
  name: '[name]',
};

// Order matters: earlier patterns claim their span first (a link may contain an @, an e-mail
// contains what looks like a handle).
const PATTERNS: { kind: PersonalDetailKind; re: RegExp; markup?: true }[] = [
  // Slack markup: <https://x|label>, <mailto:a@b|a@b>, <tel:...>, <@U123|name>, <#C123|general>, <!subteam^S1|@team>.
  { kind: 'email', re: /<mailto:[^>\n]+>/gi, markup: true },
  { kind: 'phone', re: /<tel:[^>\n]+>/gi, markup: true },
  { kind: 'link', re: /<(?:https?|ftp):\/\/[^>\n]+>/gi, markup: true },
  { kind: 'mention', re: /<@[!&]?[A-Za-z0-9]+(?:\|[^>]*)?>/g },
  { kind: 'mention', re: /<!subteam\^[A-Za-z0-9]+(?:\|[^>]*)?>/g },
  { kind: 'channel', re: /<#[A-Za-z0-9]+(?:\|[^>]*)?>/g },
  // Plain links: scheme URLs, www. hosts and bare domains with a path.
  { kind: 'link', re: /\b(?:https?|ftp):\/\/[^\s<>"')\]]+/gi },
  { kind: 'link', re: /\bwww\.[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s<>"')\]]*/gi },
  { kind: 'link', re: /\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|me|co|app|dev|gg|ly|info|xyz|us|uk|de|fr|ca|au)\/[^\s<>"')\]]*/gi },
  { kind: 'email', re: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g },
  // A plain @handle (not @everyone/@here/@channel, which name no one).
  { kind: 'mention', re: /(?<![\w@.])@(?!(?:everyone|here|channel)\b)[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,30}[A-Za-z0-9_])?/g },
  // Phone-number candidates: digits with spaces, dots, dashes or parentheses, optionally +country.
  { kind: 'phone', re: /(?<![\w+])(?:\+|00)?\(?\d[\d\s().\/-]{5,22}\d(?![\w])/g },
];

/** Is a phone-number candidate really one? 7 to 15 digits (E.164), and not a date, time or list of years. */
function looksLikePhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '');
  if (digits.length < 7 || digits.length > 15) return false;
  const s = candidate.trim();
  if (/^\d{4}[-./]\d{1,2}[-./]\d{1,2}$/.test(s) || /^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/.test(s)) return false; // dates
  if (/^(?:(?:19|20)\d{2}[\s,/-]+)+(?:19|20)\d{2}$/.test(s)) return false; // "2019 2020 2021", "2019-2020"
  if (/^\d+(?:\.\d+){2,}$/.test(s) && !/^\d{3}\.\d{3}\.\d{4}$/.test(s)) return false; // version numbers, IPs (not 555.123.4567)
  // A run of digits with one space inside and short pieces ("3 2024") is a count next to a year, not a number to call.
  if (/^\d{1,2}\s\d{4}$/.test(s)) return false;
  return true;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every personal detail in a text, left to right, without overlaps. */
export function findPersonalDetails(text: string, options: RedactOptions = {}): PersonalDetail[] {
  const found: PersonalDetail[] = [];
  const taken = (start: number, end: number) => found.some((f) => start < f.end && end > f.start);
  for (const { kind, re, markup } of PATTERNS) {
    for (const m of text.matchAll(re)) {
      let start = m.index;
      let match = m[0];
      if (kind === 'link' && !markup) {
        // A sentence's final period or comma is not part of the link.
        match = match.replace(/[.,;:!?]+$/, '');
      }
      if (kind === 'phone' && !markup) {
        // Parentheses and separators at the edges belong to the sentence, not the number, unless "(555)".
        const lead = /^[\s.\/-]+/.exec(match)?.[0].length ?? 0;
        start += lead;
        match = match.slice(lead).replace(/[\s.\/-]+$/, '');
        if (!looksLikePhone(match)) continue;
      }
      const end = start + match.length;
      if (match.length > 0 && !taken(start, end)) found.push({ kind, start, end });
    }
  }
  for (const name of nameList(options.names)) {
    const re = new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRe(name)}(?![\\p{L}\\p{N}_])`, 'giu');
    for (const m of text.matchAll(re)) {
      const end = m.index + m[0].length;
      if (!taken(m.index, end)) found.push({ kind: 'name', start: m.index, end });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

function nameList(names: RedactOptions['names']): string[] {
  if (!names) return [];
  const list = names instanceof Map ? [...names.keys()] : [...(names as readonly string[])];
  // Longest first so "Mary Ann" wins over "Mary"; very short names would match ordinary words.
  return [...new Set(list.map((n) => n.trim()).filter((n) => n.length >= 2))].sort((a, b) => b.length - a.length);
}

/** Replace every personal detail with its placeholder. */
export function redact(text: string, options: RedactOptions = {}): string {
  const details = findPersonalDetails(text, options);
  if (details.length === 0) return text;
  const names = options.names instanceof Map ? new Map([...options.names].map(([k, v]) => [k.toLowerCase(), v])) : undefined;
  let out = '';
  let at = 0;
  for (const d of details) {
    out += text.slice(at, d.start);
    out += d.kind === 'name' && names ? (names.get(text.slice(d.start, d.end).toLowerCase()) ?? PLACEHOLDER.name) : PLACEHOLDER[d.kind];
    at = d.end;
  }
  return out + text.slice(at);
}
