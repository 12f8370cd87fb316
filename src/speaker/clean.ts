// Cleans raw model output into a turn we can post: strips the speaker's own "Name:" label,
// cuts where the model starts speaking as someone else, neutralises mass pings, enforces a length.

export interface CleanOptions {
  /** The speaker's display name (its label is stripped). */
  speaker: string;
  /** Names of everyone else in the conversation (text is cut where one of them starts a line). */
  others: string[];
  /** Maximum characters; longer text is cut at the last sentence end that fits. */
  maxLength?: number;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function cleanOutput(raw: string, options: CleanOptions): string {
  let text = raw.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '').trim();

  // Leading label of the speaker itself, possibly bold or bracketed: "Anchor:", "**Anchor**:", "[Anchor]".
  const self = escapeRe(options.speaker);
  text = text.replace(new RegExp(`^(?:\\*\\*|__)?\\[?(?:${self}|assistant)\\]?(?:\\*\\*|__)?\\s*[:\\-–—]\\s*`, 'i'), '');

  // Cut where the model starts writing another participant's line.
  const names = options.others.filter((n) => n.trim().length > 0).map(escapeRe);
  if (names.length > 0) {
    const other = new RegExp(`(^|\\n)\\s*(?:\\*\\*|__)?\\[?(?:${names.join('|')}|user|human)\\]?(?:\\*\\*|__)?\\s*:`, 'i');
    const m = other.exec(text);
    if (m) text = text.slice(0, m.index);
  }
  // A second label of its own later on means the model started a new turn of its own: keep the first.
  const again = new RegExp(`\\n\\s*(?:\\*\\*|__)?${self}(?:\\*\\*|__)?\\s*:`, 'i').exec(text);
  if (again) text = text.slice(0, again.index);

  text = withoutMassPings(text);

  text = text.replace(/\n{3,}/g, '\n\n').trim();
  if (options.maxLength !== undefined && text.length > options.maxLength) text = cutAtSentence(text, options.maxLength);
  return text;
}

/**
 * Never ping everyone, a channel or a role, whatever the model wrote: @everyone / @here / @channel
 * are broken with a zero-width space (also when the model hid one of its own or used a full-width
 * @); Slack's <!everyone>, <!here|here>, <!channel> and user groups <!subteam^S1|@team>, and
 * Discord role mentions <@&123>, become plain words.
 */
export function withoutMassPings(text: string): string {
  return text
    .replace(/<!(everyone|here|channel)(?:\|[^>\n]*)?>/gi, '$1')
    .replace(/<!subteam\^[A-Za-z0-9]+(?:\|@?([^>\n]*))?>/g, (_, label: string | undefined) => `@\u200b${label || 'team'}`)
    .replace(/<@&\d+>/g, '@\u200brole')
    .replace(/[@\uff20][\u200b-\u200d\u2060\ufeff]*(everyone|here|channel)\b/gi, '@\u200b$1');
}

/** Cut text to at most `max` characters, at the last sentence end if there is one in the second half. */
export function cutAtSentence(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  const ends = [...head.matchAll(/[.!?…](?=\s|$)/g)];
  const last = ends.at(-1);
  if (last && last.index! + 1 >= max / 2) return head.slice(0, last.index! + 1).trim();
  const space = head.lastIndexOf(' ');
  return `${head.slice(0, space > max / 2 ? space : max - 1).trim()}…`;
}
