// What a post looks like in Slack: escaped text in section blocks (Slack caps a section at 3000
// characters), and on every text the offline voice wrote, a visible label, both in the blocks and
// in the plain-text fallback that notifications show.
import { webApi } from '@slack/bolt';

export type Block = webApi.KnownBlock;

export interface SlackMessage {
  /** Plain-text fallback: notifications, screen readers, search. */
  text: string;
  blocks: Block[];
}

const SECTION_LIMIT = 3000;
const MAX_SECTIONS = 45; // Slack allows 50 blocks per message; leave room for labels.

const OFFLINE_LABEL = 'offline voice: written by the built-in offline voice, not a language model';
const OFFLINE_SUFFIX = '(offline voice)';

/** Escape the three characters Slack reads as markup, so text can never ping or link by accident. */
export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Split text into pieces of at most `limit` characters, at paragraph, line or sentence ends. */
export function splitText(text: string, limit: number = SECTION_LIMIT): string[] {
  const pieces: string[] = [];
  let rest = text.trim();
  while (rest.length > limit) {
    const head = rest.slice(0, limit);
    const cut = Math.max(head.lastIndexOf('\n\n'), head.lastIndexOf('\n'), head.lastIndexOf('. ') + 1, head.lastIndexOf(' '));
    const at = cut > limit / 2 ? cut : limit;
    pieces.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

export function offlineContext(label: string = OFFLINE_LABEL): Block {
  return { type: 'context', elements: [{ type: 'mrkdwn', text: `:electric_plug: _${label}_` }] };
}

/** A persona's turn (or a notice): escaped sections, plus the offline label when it applies. */
export function turnMessage(text: string, offline: boolean): SlackMessage {
  const escaped = escapeText(text);
  const blocks: Block[] = splitText(escaped)
    .slice(0, MAX_SECTIONS)
    .map((piece) => ({ type: 'section', text: { type: 'mrkdwn', text: piece, verbatim: true } }));
  if (offline) blocks.push(offlineContext());
  return { text: offline ? `${escaped} ${OFFLINE_SUFFIX}` : escaped, blocks };
}

/** Mark a message built elsewhere (a recap) as the offline voice's. */
export function labelOffline(message: SlackMessage, label: string = OFFLINE_LABEL): SlackMessage {
  return { text: `${message.text} ${OFFLINE_SUFFIX}`, blocks: [...message.blocks, offlineContext(label)] };
}
