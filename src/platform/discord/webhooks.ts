// Webhook mode: a persona without its own bot posts through a channel webhook with its name and
// avatar. One webhook per channel (threads use their parent's, with thread_id), cached, found
// again after a restart, and recreated when Discord reports it unknown (someone deleted it).
import { DiscordAPIError, RESTJSONErrorCodes, Routes, makeURLSearchParams, type Client } from 'discord.js';
import type { APIMessage, APIWebhook } from 'discord.js';
import type { Persona } from '../../persona/schema.ts';

export const WEBHOOK_NAME = 'MASCOT companions';

interface CachedHook {
  id: string;
  token: string;
}

export class WebhookPoster {
  private readonly hooks = new Map<string, Promise<CachedHook>>();
  /** Ids of our webhooks, to recognise their messages coming back through the gateway. */
  readonly ids = new Set<string>();

  constructor(private readonly director: Client) {}

  /** Post as `persona` in a channel (or in a thread of it); returns the message id. */
  async post(channelId: string, threadId: string | undefined, persona: Persona, content: string): Promise<string> {
    const body = {
      content,
      username: persona.displayName,
      ...(persona.avatarUrl ? { avatar_url: persona.avatarUrl } : {}),
      allowed_mentions: { parse: [] },
    };
    for (let attempt = 0; ; attempt++) {
      const hook = await this.hookFor(channelId);
      try {
        const message = (await this.director.rest.post(Routes.webhook(hook.id, hook.token), {
          body,
          query: makeURLSearchParams({ wait: true, ...(threadId ? { thread_id: threadId } : {}) }),
          auth: false,
        })) as APIMessage;
        return message.id;
      } catch (err) {
        if (attempt === 0 && err instanceof DiscordAPIError && err.code === RESTJSONErrorCodes.UnknownWebhook) {
          this.forget(channelId, hook.id);
          continue;
        }
        throw err;
      }
    }
  }

  private forget(channelId: string, hookId: string): void {
    this.hooks.delete(channelId);
    this.ids.delete(hookId);
  }

  private hookFor(channelId: string): Promise<CachedHook> {
    let hook = this.hooks.get(channelId);
    if (!hook) {
      hook = this.findOrCreate(channelId);
      this.hooks.set(channelId, hook);
      hook.catch(() => this.hooks.delete(channelId));
    }
    return hook;
  }

  private async findOrCreate(channelId: string): Promise<CachedHook> {
    const appId = this.director.application?.id ?? this.director.user?.id;
    const existing = (await this.director.rest.get(Routes.channelWebhooks(channelId))) as APIWebhook[];
    const ours = existing.find((w) => w.token && w.name === WEBHOOK_NAME && (w.application_id === appId || w.user?.id === this.director.user?.id));
    const hook = ours ?? ((await this.director.rest.post(Routes.channelWebhooks(channelId), { body: { name: WEBHOOK_NAME } })) as APIWebhook);
    if (!hook.token) throw new Error(`webhook ${hook.id} in channel ${channelId} has no token`);
    this.ids.add(hook.id);
    return { id: hook.id, token: hook.token };
  }
}
