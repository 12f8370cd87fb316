// The Discord platform: connects the director (the one listener) and every persona bot, turns
// messages, reactions (added and removed) and slash commands into engine, store and /mascot calls,
// and gives the engine an outlet per conversation. Conversation logic stays in the engine and the
// store; this only translates.
import Bottleneck from 'bottleneck';
import { PermissionFlagsBits, Routes, type AutocompleteInteraction, type ChatInputCommandInteraction, type Client, type Message, type MessageReaction, type PartialMessageReaction, type PartialUser, type User } from 'discord.js';
import type { ChatEvent } from '../../core/types.ts';
import type { Logger } from '../../log.ts';
import type { MascotContext } from '../../moderation/mascot.ts';
import type { Persona } from '../../persona/schema.ts';
import { channelKeyOf, type Engine } from '../../session/engine.ts';
import type { Platform } from '../platform.ts';
import { createClient, loginClient } from './clients.ts';
import { MEMBER_COMMAND, MODERATOR_COMMAND, answerAutocomplete, answerCommand, discordInvocation, slashCommands } from './commands.ts';
import { directMessageEvent, guildMessageEvent, type Directory } from './inbound.ts';
import { ChannelOutlet, type ConversationPlace, type PostingDeps } from './outlet.ts';
import { applyReaction, reactionOf, type ReactionChange } from './reactions.ts';
import type { DiscordSettings, PersonaIdentity } from './settings.ts';
import { WebhookPoster } from './webhooks.ts';

/** Per-channel limit to stay under: Discord users observe about 5 messages per 5 s per channel. */
export interface PacingOptions {
  messagesPerWindow: number;
  windowMs: number;
}

export const DEFAULT_PACING: PacingOptions = { messagesPerWindow: 5, windowMs: 5000 };

/**
 * Evenly spaced posts keep every sliding window under the limit (a reservoir refilled per fixed
 * window would not: a burst at the end of one window and the start of the next doubles it).
 * The 10% margin absorbs request latency jitter.
 */
const SPACING_MARGIN = 1.1;

interface PersonaBot {
  /** The variables this token was read from (personas may share a bot). */
  tokenEnvs: Set<string>;
  token: string;
  client: Client;
  /** Personas this bot posts as (usually one). */
  personas: Persona[];
}

export interface DiscordPlatformOptions {
  engine: Engine;
  log: Logger;
  settings: DiscordSettings;
  identities: Map<Persona, PersonaIdentity>;
  pacing?: PacingOptions;
}

export class DiscordPlatform implements Platform {
  readonly name = 'discord';
  readonly director: Client;
  private readonly bots: PersonaBot[] = [];
  private readonly webhooks: WebhookPoster | undefined;
  private readonly pacing: Bottleneck.Group;
  private readonly outlets = new Map<string, ChannelOutlet>();
  /** Rounds handed to the engine and not yet finished, and how many per channel. */
  private readonly inflight = new Set<Promise<void>>();
  private readonly pending = new Map<string, number>();
  private readonly posting: PostingDeps;
  private readonly engine: Engine;
  private readonly log: Logger;
  private readonly settings: DiscordSettings;

  constructor(options: DiscordPlatformOptions) {
    this.engine = options.engine;
    this.log = options.log.child({ platform: 'discord' });
    this.settings = options.settings;
    const { apiBaseUrl } = this.settings;
    this.director = createClient('director', apiBaseUrl);

    // One client per distinct token: personas that share a bot share its connection.
    const byToken = new Map<string, { tokenEnvs: Set<string>; personas: Persona[] }>();
    for (const [persona, identity] of options.identities) {
      if (identity.kind !== 'bot') continue;
      const entry = byToken.get(identity.token) ?? { tokenEnvs: new Set<string>(), personas: [] };
      entry.tokenEnvs.add(identity.tokenEnv);
      entry.personas.push(persona);
      byToken.set(identity.token, entry);
    }
    for (const [token, { tokenEnvs, personas }] of byToken) this.bots.push({ token, tokenEnvs, personas, client: createClient('persona', apiBaseUrl, personas) });

    this.webhooks = [...options.identities.values()].some((i) => i.kind === 'webhook') ? new WebhookPoster(this.director) : undefined;
    const pacing = options.pacing ?? DEFAULT_PACING;
    this.pacing = new Bottleneck.Group({ maxConcurrent: 1, minTime: Math.ceil((pacing.windowMs / pacing.messagesPerWindow) * SPACING_MARGIN) });
    this.posting = {
      director: this.director,
      clientOf: (persona) => this.botOf(persona)?.client,
      webhooks: this.webhooks,
      pacing: this.pacing,
      log: this.log,
      store: this.engine.store,
    };
  }

  /** Log every client in (failing with the persona's name), register commands, start listening. */
  async start(): Promise<void> {
    const logins = [
      loginClient(this.director, this.settings.directorToken, 'director (DISCORD_DIRECTOR_TOKEN)'),
      ...this.bots.map((b) => loginClient(b.client, b.token, `persona ${b.personas.map((p) => `"${p.id}"`).join(', ')} (${[...b.tokenEnvs].join(', ')})`)),
    ];
    const results = await Promise.allSettled(logins);
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as Error).message);
    if (failures.length > 0) {
      await this.stop();
      throw new Error(`Discord start-up failed:\n  ${failures.join('\n  ')}`);
    }
    try {
      await this.registerCommands();
    } catch (err) {
      await this.stop();
      throw new Error(`Discord start-up failed: could not register the /mascot commands for the director application (${(err as Error).message})`);
    }
    this.listen();
    this.log.info(
      { director: this.director.user?.tag, personas: this.bots.map((b) => `${b.personas.map((p) => p.id).join('+')}=${b.client.user?.tag}`), webhooks: this.webhooks !== undefined },
      'Discord connected',
    );
  }

  /**
   * The bot a persona posts as. Matched by the token variable its file names, since the engine
   * hands over tuned copies of personas.
   */
  private botOf(persona: Persona): PersonaBot | undefined {
    const tokenEnv = persona.identity.discord?.tokenEnv;
    return tokenEnv === undefined ? undefined : this.bots.find((b) => b.tokenEnvs.has(tokenEnv));
  }

  /** The persona bots' clients (one per distinct token). */
  get personaClients(): readonly Client[] {
    return this.bots.map((b) => b.client);
  }

  /** Settles when every message handed to the engine so far has been handled. */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  async stop(): Promise<void> {
    for (const outlet of this.outlets.values()) outlet.stopTyping();
    await Promise.allSettled([this.director, ...this.bots.map((b) => b.client)].map((c) => c.destroy()));
    await Promise.allSettled(this.pacing.limiters().map(({ limiter }) => limiter.disconnect(false)));
  }

  private async registerCommands(): Promise<void> {
    const appId = this.director.application?.id ?? this.director.user!.id;
    const route = this.settings.commandGuildId ? Routes.applicationGuildCommands(appId, this.settings.commandGuildId) : Routes.applicationCommands(appId);
    await this.director.rest.put(route, { body: slashCommands() });
  }

  private listen(): void {
    this.director.on('messageCreate', (message) => this.onGuildMessage(message));
    const onReaction = (change: ReactionChange) => (reaction: MessageReaction | PartialMessageReaction, user: User | PartialUser) => {
      const r = reactionOf(this.engine.store, reaction, user);
      if (r && applyReaction(this.engine.store, change, r)) this.log.debug({ channel: r.channelId, emoji: r.emoji }, `reaction ${change}: feedback ${change === 'added' ? 'stored' : 'withdrawn'}`);
    };
    this.director.on('messageReactionAdd', onReaction('added'));
    this.director.on('messageReactionRemove', onReaction('removed'));
    this.director.on('interactionCreate', (interaction) => {
      const ours = (name: string) => name === MODERATOR_COMMAND || name === MEMBER_COMMAND;
      const run = interaction.isChatInputCommand() && ours(interaction.commandName)
        ? answerCommand(interaction, this.contextFor)
        : interaction.isAutocomplete() && ours(interaction.commandName)
          ? answerAutocomplete(interaction, this.contextFor)
          : undefined;
      run?.catch((err: Error) => this.log.error({ err: err.message }, 'slash command failed'));
    });
    for (const bot of this.bots) bot.client.on('messageCreate', (message) => this.onDirectMessage(bot, message));
    for (const client of [this.director, ...this.bots.map((b) => b.client)]) {
      client.on('error', (err) => this.log.error({ err: err.message }, 'Discord client error'));
      client.on('shardResume', () => this.log.info({ client: client.user?.tag }, 'Discord gateway resumed'));
      client.on('shardReconnecting', () => this.log.warn({ client: client.user?.tag }, 'Discord gateway reconnecting'));
    }
  }

  private directory(): Directory {
    return {
      directorUserId: this.director.user!.id,
      personasOfUser: (userId) => this.bots.find((b) => b.client.user?.id === userId)?.personas ?? [],
      isOurWebhook: (id) => this.webhooks?.ids.has(id) ?? false,
    };
  }

  private onGuildMessage(message: Message): void {
    if (!message.inGuild()) return;
    const parentId = message.channel.isThread() ? (message.channel.parentId ?? undefined) : undefined;
    const pack = this.engine.packs.get(this.engine.channelConfig(channelKeyOf('discord', parentId ?? message.channelId)).pack)!;
    const event = guildMessageEvent(message, pack.personas, this.directory());
    if (!event) return;
    this.deliver(event, { channelId: message.channelId, ...(parentId ? { parentId } : {}) });
  }

  private onDirectMessage(bot: PersonaBot, message: Message): void {
    const persona = bot.personas[0]!;
    const event = directMessageEvent(message, persona);
    if (!event) return;
    // A DM uses the pack of the persona it is with.
    const key = channelKeyOf('discord', message.channelId);
    const home = this.settings.packs.find((p) => p.personas.includes(persona))!;
    if (this.engine.channelConfig(key).pack !== home.id) this.engine.store.setChannelSetting(key, 'pack', home.id, `discord: DM with ${persona.id}`);
    this.deliver(event, { channelId: message.channelId, dmClient: bot.client });
  }

  private deliver(event: ChatEvent, place: ConversationPlace): void {
    let outlet = this.outlets.get(place.channelId);
    if (!outlet) {
      outlet = new ChannelOutlet(this.posting, place);
      this.outlets.set(place.channelId, outlet);
    }
    // A person speaking cancels the running round: stop showing its personas as typing.
    if (!event.author.isBot) outlet.stopTyping();
    const { channelId } = place;
    this.pending.set(channelId, (this.pending.get(channelId) ?? 0) + 1);
    const handled = this.engine.receive(event, outlet).catch((err: Error) => this.log.error({ channel: channelId, err: err.message }, 'round failed'));
    this.inflight.add(handled);
    void handled.finally(() => {
      this.inflight.delete(handled);
      const left = (this.pending.get(channelId) ?? 1) - 1;
      if (left > 0) return void this.pending.set(channelId, left);
      this.pending.delete(channelId);
      // No round left here (finished, paused, failed): nobody is writing any more.
      outlet.stopTyping();
    });
  }

  private readonly contextFor = (interaction: ChatInputCommandInteraction | AutocompleteInteraction): MascotContext => {
    const channel = interaction.channel;
    const parentId = channel?.isThread() ? (channel.parentId ?? undefined) : undefined;
    const member = interaction.member;
    const roleIds = member ? (Array.isArray(member.roles) ? member.roles : [...member.roles.cache.keys()]) : [];
    const name = (member && 'displayName' in member ? member.displayName : undefined) ?? interaction.user.displayName;
    return {
      engine: this.engine,
      platform: 'discord',
      channelId: interaction.channelId ?? '',
      ...(parentId ? { parentChannelId: parentId } : {}),
      ...(interaction.guildId ? { spaceId: interaction.guildId } : {}),
      user: { id: interaction.user.id, name, isModerator: interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false, roleIds },
      moderators: this.settings.moderators,
      packs: this.settings.packs.map((p) => p.id),
      identityOf: (persona) => this.describeIdentity(persona),
      invocation: discordInvocation,
    };
  };

  private describeIdentity(persona: Persona): string {
    const bot = this.botOf(persona);
    if (bot) return bot.client.isReady() ? `connected as @${bot.client.user.username}` : `bot ${[...bot.tokenEnvs].join(', ')} not connected`;
    return this.webhooks ? 'posts through a channel webhook' : 'no Discord identity';
  }
}
