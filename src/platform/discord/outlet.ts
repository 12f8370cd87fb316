// How the engine speaks in one Discord conversation: each persona through its own bot (or a
// webhook in webhook mode), typing while it writes, never pinging anyone, replying to the human
// without a ping on the first turn, splitting long turns (every part's id is stored with the turn,
// so a reaction on any part is feedback on it), paced per channel. Every message carries a nonce
// Discord enforces, so a retried request never posts a turn twice.
import { randomBytes } from 'node:crypto';
import type Bottleneck from 'bottleneck';
import { Routes, type APIMessage, type Client } from 'discord.js';
import type { Logger } from '../../log.ts';
import type { Persona } from '../../persona/schema.ts';
import { channelKeyOf } from '../../session/engine.ts';
import type { Store } from '../../store/store.ts';
import type { Outlet, PostOptions, PostedMessage } from '../platform.ts';
import { DISCORD_MESSAGE_LIMIT, splitMessage } from './split.ts';
import type { WebhookPoster } from './webhooks.ts';

/** Shown under every message the offline voice wrote (Discord's small grey subtext). */
export const OFFLINE_LABEL = '-# offline voice: written without a language model';

/** Discord shows typing for about 10 s per request; refresh while a slow model writes. */
const TYPING_REFRESH_MS = 8000;
const TYPING_REFRESHES = 6;

export interface PostingDeps {
  director: Client;
  /** The client of a persona's own bot; undefined in webhook mode. */
  clientOf(persona: Persona): Client | undefined;
  webhooks: WebhookPoster | undefined;
  /** One limiter per channel (bottleneck group keyed by channel id). */
  pacing: Bottleneck.Group;
  log: Logger;
  /** Where the parts of a split turn are recorded. */
  store: Pick<Store, 'recordParts'>;
}

export interface ConversationPlace {
  channelId: string;
  /** For a thread: its parent channel (webhooks belong to the parent). */
  parentId?: string;
  /** For a DM: the persona bot the person is talking to; everything is posted through it. */
  dmClient?: Client;
}

/** A Discord nonce: at most 25 characters. */
const newNonce = () => randomBytes(12).toString('base64url');

export class ChannelOutlet implements Outlet {
  private readonly typingTimers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly deps: PostingDeps,
    readonly place: ConversationPlace,
  ) {}

  async post(persona: Persona, text: string, options: PostOptions): Promise<PostedMessage> {
    this.stopTyping(persona.id);
    const label = options.offline ? `\n${OFFLINE_LABEL}` : '';
    const chunks = splitMessage(text, DISCORD_MESSAGE_LIMIT - label.length);
    if (chunks.length === 0) throw new Error('nothing to post: the turn is empty');
    const limiter = this.deps.pacing.key(this.place.channelId);
    const ids: string[] = [];
    // A turn that started posting is finished whole, even if a newer message arrives meanwhile.
    for (const [i, chunk] of chunks.entries()) {
      ids.push(await limiter.schedule(() => this.send(persona, chunk + label, i === 0 ? options.replyTo : undefined)));
    }
    // The engine logs the turn under its first message; the parts point there.
    this.deps.store.recordParts(channelKeyOf('discord', this.place.channelId), ids);
    return { messageId: ids[0]! };
  }

  private async send(persona: Persona, content: string, replyTo: string | undefined): Promise<string> {
    const client = this.place.dmClient ?? this.deps.clientOf(persona);
    if (client) {
      const body = {
        content,
        allowed_mentions: { parse: [], replied_user: false },
        nonce: newNonce(),
        enforce_nonce: true,
        ...(replyTo ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } } : {}),
      };
      const message = (await client.rest.post(Routes.channelMessages(this.place.channelId), { body })) as APIMessage;
      return message.id;
    }
    if (!this.deps.webhooks) throw new Error(`persona "${persona.id}" has no Discord identity (no bot token and webhook mode is off)`);
    const { parentId, channelId } = this.place;
    return this.deps.webhooks.post(parentId ?? channelId, parentId ? channelId : undefined, persona, content);
  }

  async typing(persona: Persona): Promise<void> {
    const client = this.place.dmClient ?? this.deps.clientOf(persona);
    if (!client) return; // a webhook cannot show typing
    this.stopTyping(persona.id);
    const send = () =>
      client.rest.post(Routes.channelTyping(this.place.channelId)).catch((err: Error) => this.deps.log.debug({ channel: this.place.channelId, err: err.message }, 'typing failed'));
    let left = TYPING_REFRESHES;
    const timer = setInterval(() => {
      if (left-- <= 0) this.stopTyping(persona.id);
      else void send();
    }, TYPING_REFRESH_MS);
    timer.unref();
    this.typingTimers.set(persona.id, timer);
    await send();
  }

  /** Stop refreshing typing (the persona posted, or a new human message cancelled the round). */
  stopTyping(personaId?: string): void {
    for (const [id, timer] of this.typingTimers) {
      if (personaId !== undefined && id !== personaId) continue;
      clearInterval(timer);
      this.typingTimers.delete(id);
    }
  }

  async notice(text: string): Promise<void> {
    const client = this.place.dmClient ?? this.deps.director;
    for (const chunk of splitMessage(text)) {
      await this.deps.pacing.key(this.place.channelId).schedule(() =>
        client.rest.post(Routes.channelMessages(this.place.channelId), { body: { content: chunk, allowed_mentions: { parse: [] }, nonce: newNonce(), enforce_nonce: true } }),
      );
    }
  }
}
