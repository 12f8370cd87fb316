// The engine's Outlet for one Slack conversation: each turn is posted in the conversation's
// thread under the persona's identity, through the channel's pacing queue.
import type { Outlet } from '../platform.ts';
import type { SlackIdentities } from './identities.ts';
import type { SlackConversation } from './inbound.ts';
import { turnMessage } from './message.ts';
import type { SlackPoster } from './poster.ts';

export function slackOutlet(conversation: SlackConversation, poster: SlackPoster, identities: SlackIdentities): Outlet {
  const where = { channel: conversation.channel, ...(conversation.threadTs ? { threadTs: conversation.threadTs } : {}) };
  return {
    async post(persona, text, options) {
      const ts = await poster.post({ ...where, message: turnMessage(text, options.offline), identity: identities.of(persona), signal: options.signal });
      return { messageId: ts };
    },
    // Notices come from the app itself, not from a persona.
    async notice(text) {
      await poster.post({ ...where, message: turnMessage(text, false), identity: identities.app });
    },
  };
}
