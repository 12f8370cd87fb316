// Slack reactions on persona turns, both ways: reaction_added stores 👍/👎 (`+1`, `-1`, skin tones
// too) as feedback on the turn, reaction_removed deletes it again. The event names the channel and
// the message but not the thread, so the conversation (a thread is `slack:<channel>:<thread ts>`)
// is the one the turn was logged in. A Slack turn is always one message (long text becomes several
// sections of it), so the message reacted to is the turn. Bots' reactions are never feedback.
import { reactionValue, recordReaction, type Reaction } from '../../moderation/mascot.ts';
import { channelKeyOf } from '../../session/engine.ts';
import type { Store } from '../../store/store.ts';
import type { SlackDirectory } from './directory.ts';
import type { SlackIdentities } from './identities.ts';

/** The fields of Slack's `reaction_added` and `reaction_removed` events that we read. */
export interface SlackReactionEvent {
  type: string;
  user?: string;
  reaction?: string;
  item?: { type?: string; channel?: string; ts?: string };
  event_ts?: string;
}

export interface ReactionDeps {
  store: Store;
  identities: SlackIdentities;
  directory: SlackDirectory;
}

/** Store or withdraw the feedback a reaction event stands for. Resolves to whether a feedback row changed. */
export async function handleReaction(deps: ReactionDeps, e: SlackReactionEvent): Promise<boolean> {
  const { store } = deps;
  const { user, reaction: emoji, item } = e;
  if (!user || !emoji || item?.type !== 'message' || !item.channel || !item.ts) return false;
  const value = reactionValue(emoji);
  if (value === undefined || deps.identities.isOurs(undefined, user)) return false;
  const key = store.safely('reaction lookup', () => store.conversationOfBotMessage(channelKeyOf('slack', item.channel!), item.ts!));
  if (!key) return false;
  // Other apps' bot users: only asked about once a reaction lands on one of our turns (cached).
  if ((await deps.directory.person(user)).isBot) return false;
  const at = e.event_ts ? Math.round(Number(e.event_ts) * 1000) : NaN;
  const r: Reaction = { platform: 'slack', channelId: key.slice('slack:'.length), messageId: item.ts, userId: user, emoji, at: Number.isFinite(at) ? at : Date.now() };
  if (e.type === 'reaction_added') return recordReaction(store, r);
  if (e.type === 'reaction_removed') return store.withdrawReaction({ channelKey: key, messageId: r.messageId, userId: user, value });
  return false;
}
