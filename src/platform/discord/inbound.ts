// Translate a discord.js Message into a ChatEvent: who wrote it (a person, one of our personas,
// another bot), which personas it addresses (a mention of a persona's bot or its managed role,
// "@Name", or the name opening the message), and where (channel, thread, DM).
import type { Message } from 'discord.js';
import type { Author, ChatEvent } from '../../core/types.ts';
import type { Persona } from '../../persona/schema.ts';

export interface Directory {
  directorUserId: string;
  /** Our personas a Discord user id posts as (a shared bot may carry several, across packs). */
  personasOfUser(userId: string): readonly Persona[];
  /** One of our webhooks (webhook mode). */
  isOurWebhook(webhookId: string): boolean;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Persona ids of `personas` the message addresses. */
export function personaMentions(message: Message, personas: readonly Persona[], dir: Directory): string[] {
  const found = new Set<string>();
  const botIds = [...message.mentions.users.keys(), ...message.mentions.roles.map((r) => r.tags?.botId).filter((id): id is string => id !== undefined)];
  for (const id of botIds) for (const p of dir.personasOfUser(id)) if (personas.includes(p)) found.add(p.id);
  const text = message.content;
  for (const p of personas) {
    const name = escapeRe(p.displayName);
    if (new RegExp(`(^|[^\\w])@${name}(?![\\w])`, 'i').test(text) || new RegExp(`^\\s*${name}\\s*[,:]`, 'i').test(text)) found.add(p.id);
  }
  return [...found];
}

/** Whether the message mentions the director itself (its user or its managed role). */
function addressesDirector(message: Message, dir: Directory): boolean {
  return message.mentions.users.has(dir.directorUserId) || message.mentions.roles.some((r) => r.tags?.botId === dir.directorUserId);
}

/**
 * A guild message as the engine sees it; undefined for what is not something said (system
 * messages, attachments only, the director's own notices). `personas` are the channel pack's.
 */
export function guildMessageEvent(message: Message, personas: readonly Persona[], dir: Directory): ChatEvent | undefined {
  if (message.system || !message.inGuild()) return undefined;
  const text = message.cleanContent.trim();
  if (!text) return undefined;

  let author: Author;
  if (message.webhookId) {
    const persona = dir.isOurWebhook(message.webhookId) ? personas.find((p) => p.displayName === message.author.username) : undefined;
    author = { id: message.webhookId, name: message.author.username, isBot: true, ...(persona ? { personaId: persona.id } : {}) };
  } else if (message.author.bot) {
    if (message.author.id === dir.directorUserId) return undefined;
    const ours = dir.personasOfUser(message.author.id);
    const persona = ours.find((p) => personas.includes(p)) ?? ours[0];
    author = { id: message.author.id, name: persona?.displayName ?? message.author.displayName, isBot: true, ...(persona ? { personaId: persona.id } : {}) };
  } else {
    author = { id: message.author.id, name: message.member?.displayName ?? message.author.displayName, isBot: false };
  }

  const thread = message.channel.isThread() ? message.channel : undefined;
  return {
    platform: 'discord',
    channelId: message.channelId,
    messageId: message.id,
    author,
    text,
    mentions: author.isBot ? [] : personaMentions(message, personas, dir),
    at: message.createdTimestamp,
    spaceId: message.guildId,
    ...(thread?.parentId ? { parentChannelId: thread.parentId } : {}),
    ...(!author.isBot && addressesDirector(message, dir) ? { addressed: true } : {}),
  };
}

/** A person's DM to a persona bot: a 1:1 conversation with that persona. */
export function directMessageEvent(message: Message, persona: Persona): ChatEvent | undefined {
  if (message.system || message.author.bot || message.inGuild()) return undefined;
  const text = message.cleanContent.trim();
  if (!text) return undefined;
  return {
    platform: 'discord',
    channelId: message.channelId,
    messageId: message.id,
    author: { id: message.author.id, name: message.author.displayName, isBot: false },
    text,
    mentions: [persona.id],
    at: message.createdTimestamp,
    directPersonaId: persona.id,
  };
}
