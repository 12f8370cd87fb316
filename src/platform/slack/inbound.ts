// Slack message events -> ChatEvent. A conversation is a channel plus a thread: in channels the
// round happens in the thread of the human's message (a meeting lives in a thread), and the
// thread follows its channel's settings. A DM with the app is one conversation and always on.
import type { Author, ChatEvent } from '../../core/types.ts';
import type { Persona } from '../../persona/schema.ts';
import type { SlackDirectory } from './directory.ts';
import type { SlackIdentities } from './identities.ts';

/** The fields of Slack's `message` and `app_mention` events that we read. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  username?: string;
  bot_profile?: { name?: string };
  text?: string;
  ts: string;
  thread_ts?: string;
  team?: string;
  hidden?: boolean;
}

/** Where a message lives and where our answer goes. */
export interface SlackConversation {
  channel: string;
  /** Thread we answer in; absent for a top-level DM conversation. */
  threadTs?: string;
  /** Conversation id for the engine (its channel key is `slack:<id>`). */
  id: string;
  /** The channel whose settings apply, when the conversation is a thread. */
  parentId?: string;
}

/** Subtypes that are people (or other bots) saying something; edits, joins and the like are not. */
const SPOKEN_SUBTYPES = new Set([undefined, 'bot_message', 'thread_broadcast', 'file_share', 'me_message']);

const isDirectMessage = (e: Pick<SlackMessageEvent, 'channel' | 'channel_type'>) => e.channel_type === 'im' || (e.channel_type === undefined && e.channel.startsWith('D'));

export function conversationOf(e: Pick<SlackMessageEvent, 'channel' | 'channel_type' | 'ts' | 'thread_ts'>): SlackConversation {
  if (isDirectMessage(e) && !e.thread_ts) return { channel: e.channel, id: e.channel };
  const root = e.thread_ts ?? e.ts;
  return { channel: e.channel, threadTs: root, id: threadConversationId(e.channel, root), parentId: e.channel };
}

export const threadConversationId = (channel: string, threadTs: string) => `${channel}:${threadTs}`;

/** Slack markup to readable text: <@U1> -> @Name, <#C1|general> -> #general, <url|label> -> label (url). */
export async function readableText(text: string, nameOf: (userId: string) => Promise<string>): Promise<string> {
  const ids = [...new Set([...text.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)].map((m) => m[1]!))];
  const names = new Map(await Promise.all(ids.map(async (id) => [id, await nameOf(id)] as const)));
  return text
    .replace(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g, (_, id: string) => `@${names.get(id) ?? id}`)
    .replace(/<#[CG][A-Z0-9]+\|([^>]*)>/g, '#$1')
    .replace(/<#([CG][A-Z0-9]+)>/g, '#$1')
    .replace(/<!subteam\^[A-Z0-9]+\|([^>]*)>/g, '$1')
    .replace(/<!date\^[^|>]*\|([^>]*)>/g, '$1')
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, (_, url: string, label: string) => (label === url ? url : `${label} (${url})`))
    .replace(/<((?:https?|mailto):[^>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Personas the message addresses: mentions of a persona's own app (<@U...>), "@Name" anywhere, or
 * the name opening the message ("Skeptic, what could go wrong?").
 */
export function personaMentions(rawText: string, personas: readonly Persona[], identities: SlackIdentities): string[] {
  const found = new Set<string>();
  for (const m of rawText.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)) {
    const personaId = identities.personaOfUser(m[1]!);
    if (personaId) found.add(personaId);
  }
  for (const p of personas) {
    const name = escapeRe(p.displayName);
    if (new RegExp(`(^|[^\\w])@${name}(?![\\w])`, 'i').test(rawText) || new RegExp(`^\\s*${name}\\s*[,:]`, 'i').test(rawText)) found.add(p.id);
  }
  return [...found];
}

export interface InboundContext {
  identities: SlackIdentities;
  directory: SlackDirectory;
  /** Personas of the pack the conversation's channel uses (for names in the text). */
  personasFor: (conversation: SlackConversation) => readonly Persona[];
  /** Every persona we run, across packs (to name our own persona apps). */
  allPersonas: readonly Persona[];
}

/** Normalise a Slack message event; undefined for events that are not something said. */
export async function toChatEvent(e: SlackMessageEvent, ctx: InboundContext, teamId?: string): Promise<ChatEvent | undefined> {
  if (e.hidden || !SPOKEN_SUBTYPES.has(e.subtype) || !e.channel || !e.ts) return undefined;
  const raw = e.text ?? '';
  if (!raw.trim()) return undefined;
  const conversation = conversationOf(e);
  const { identities, directory } = ctx;

  let author: Author;
  if (e.bot_id || e.subtype === 'bot_message') {
    const ours = identities.isOurs(e.bot_id, e.user);
    const personaId = identities.personaOfBot(e.bot_id) ?? (ours ? ctx.allPersonas.find((p) => p.displayName === e.username)?.id : undefined);
    const persona = personaId ? ctx.allPersonas.find((p) => p.id === personaId) : undefined;
    // Our own posts are in the transcript already; one that is no persona's (a notice) is not a turn.
    if (ours && !persona) return undefined;
    author = {
      id: e.bot_id ?? e.user ?? 'bot',
      name: persona?.displayName ?? e.username ?? e.bot_profile?.name ?? 'bot',
      isBot: true,
      ...(persona ? { personaId: persona.id } : {}),
    };
  } else if (e.user) {
    const person = await directory.person(e.user);
    author = { id: e.user, name: person.name, isBot: person.isBot };
  } else return undefined;

  const text = await readableText(raw, async (id) => {
    const personaId = identities.personaOfUser(id);
    if (personaId) return ctx.allPersonas.find((p) => p.id === personaId)?.displayName ?? personaId;
    if (id === identities.director.userId) return identities.director.name;
    return (await directory.person(id)).name;
  });
  const direct = isDirectMessage(e);
  const mentionsApp = raw.includes(`<@${identities.director.userId}>`) || raw.includes(`<@${identities.director.userId}|`);
  return {
    platform: 'slack',
    channelId: conversation.id,
    messageId: e.ts,
    author,
    text,
    mentions: author.isBot ? [] : personaMentions(raw, ctx.personasFor(conversation), identities),
    at: Math.round(Number(e.ts) * 1000),
    ...((e.team ?? teamId) ? { spaceId: e.team ?? teamId } : {}),
    ...(conversation.parentId ? { parentChannelId: conversation.parentId } : {}),
    ...(!author.isBot && (direct || mentionsApp) ? { addressed: true } : {}),
  };
}
