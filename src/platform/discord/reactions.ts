// Reactions on persona messages, both ways: adding 👍/👎 stores feedback on the turn, removing it
// deletes that feedback again. A reaction on any part of a turn that was split (over 2000
// characters) counts for the whole turn. Bots' reactions are never feedback.
import type { MessageReaction, PartialMessageReaction, PartialUser, User } from 'discord.js';
import { reactionValue, recordReaction, type Reaction } from '../../moderation/mascot.ts';
import { channelKeyOf } from '../../session/engine.ts';
import type { Store } from '../../store/store.ts';

export type ReactionChange = 'added' | 'removed';

/** A discord.js reaction event in the store's terms; undefined for what is never feedback. */
export function reactionOf(store: Store, reaction: MessageReaction | PartialMessageReaction, user: User | PartialUser, at: number = Date.now()): Reaction | undefined {
  // A removal carries only the user's id: a user discord.js has not cached has `bot` null. Such a
  // removal is still handled: a bot never has stored feedback, so it deletes nothing.
  if (user.bot === true || !reaction.emoji.name) return undefined;
  const { channelId, id } = reaction.message;
  return { platform: 'discord', channelId, messageId: store.turnOf(channelKeyOf('discord', channelId), id), userId: user.id, emoji: reaction.emoji.name, at };
}

/** Store or withdraw the feedback a reaction stands for. Returns whether a feedback row changed. */
export function applyReaction(store: Store, change: ReactionChange, r: Reaction): boolean {
  if (change === 'added') return recordReaction(store, r);
  const value = reactionValue(r.emoji);
  if (value === undefined) return false;
  return store.withdrawReaction({ channelKey: channelKeyOf(r.platform, r.channelId), messageId: r.messageId, userId: r.userId, value });
}
