// 👍/👎 reactions on persona messages are feedback on that message. Platform adapters pass the
// emoji as their platform names it ("👍" on Discord, "+1" / "thumbsup" on Slack).
import type { PlatformName } from '../core/types.ts';
import { channelKeyOf } from '../session/engine.ts';
import type { Store } from '../store/store.ts';

const UP = new Set(['👍', '👍🏻', '👍🏼', '👍🏽', '👍🏾', '👍🏿', '+1', 'thumbsup']);
const DOWN = new Set(['👎', '👎🏻', '👎🏼', '👎🏽', '👎🏾', '👎🏿', '-1', 'thumbsdown']);

/** +1, -1, or undefined for any other emoji. Skin-tone variants count (Slack: "+1::skin-tone-3"). */
export function reactionValue(emoji: string): 1 | -1 | undefined {
  const base = emoji.split('::')[0]!;
  if (UP.has(base)) return 1;
  if (DOWN.has(base)) return -1;
  return undefined;
}

export interface Reaction {
  platform: PlatformName;
  channelId: string;
  /** Platform id of the message reacted to. */
  messageId: string;
  userId: string;
  emoji: string;
  at: number;
}

/**
 * Store a reaction as feedback when it is 👍/👎 on one of our persona messages and the person
 * has not opted out. Returns whether it was stored.
 */
export function recordReaction(store: Store, r: Reaction): boolean {
  const value = reactionValue(r.emoji);
  if (value === undefined) return false;
  const key = channelKeyOf(r.platform, r.channelId);
  const ours = store.safely('reaction lookup', () => store.botMessage(key, r.messageId));
  if (!ours || store.isOptedOut(r.platform, r.userId)) return false;
  store.addFeedback({ channelKey: key, messageId: r.messageId, ...(ours.roundId ? { roundId: ours.roundId } : {}), userId: r.userId, kind: 'reaction', value, at: r.at });
  return true;
}
