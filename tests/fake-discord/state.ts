// What the fake Discord knows: users and bot applications, guilds with channels, threads, roles
// and members, DM channels, messages, webhooks, application commands and interactions.
// Payloads follow discord-api-types v10 closely enough for discord.js 14 to build its structures.
import { ChannelType } from 'discord.js';

export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: string;
  avatar: string | null;
  bot?: boolean;
}

export interface FakeBot {
  token: string;
  user: FakeUser;
  applicationId: string;
  /** Whether the application may use the privileged MessageContent intent. */
  messageContentAllowed: boolean;
}

export interface FakeRole {
  id: string;
  name: string;
  permissions: string;
  managed: boolean;
  tags?: { bot_id: string };
}

export interface FakeGuild {
  id: string;
  name: string;
  ownerId: string;
  roles: FakeRole[];
  /** user id -> role ids */
  members: Map<string, string[]>;
  botIds: Set<string>;
}

export interface FakeChannel {
  id: string;
  type: ChannelType;
  name?: string;
  guild_id?: string;
  parent_id?: string;
  /** For DMs: the person and the bot. */
  recipientIds: string[];
}

export interface FakeMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: FakeUser;
  content: string;
  timestamp: string;
  edited_timestamp: null;
  tts: false;
  mention_everyone: false;
  mentions: FakeUser[];
  mention_roles: string[];
  attachments: [];
  embeds: [];
  components: [];
  pinned: false;
  type: number;
  flags: number;
  nonce?: string;
  webhook_id?: string;
  message_reference?: { type: 0; message_id: string; channel_id: string; guild_id?: string };
  /** Token of the bot that posted it (for nonce deduplication), if posted through the API. */
  postedWith?: string;
}

export interface FakeWebhook {
  id: string;
  token: string;
  type: 1;
  name: string;
  channel_id: string;
  guild_id: string;
  application_id: string;
  avatar: null;
  user: FakeUser;
}

/** What a bot answered to an interaction: a message (content, flags) or autocomplete choices. */
export interface InteractionResponseData {
  content?: string;
  flags?: number;
  choices?: { name: string; value: string }[];
}

export interface FakeInteraction {
  id: string;
  token: string;
  bot: FakeBot;
  /** Callback responses and follow-ups, in order. */
  responses: { type: number; data: InteractionResponseData | undefined }[];
}

export class FakeState {
  private counter = 0n;
  readonly users = new Map<string, FakeUser>();
  readonly bots: FakeBot[] = [];
  readonly guilds = new Map<string, FakeGuild>();
  readonly channels = new Map<string, FakeChannel>();
  readonly messages = new Map<string, FakeMessage[]>();
  readonly webhooks = new Map<string, FakeWebhook>();
  readonly commands = new Map<string, { id: string; name: string; [k: string]: unknown }[]>();
  readonly guildCommands = new Map<string, unknown[]>();
  readonly interactions = new Map<string, FakeInteraction>();

  /** Discord-style ids: time-ordered 64-bit integers as strings. */
  snowflake(): string {
    this.counter++;
    return (((BigInt(Date.now()) - 1_420_070_400_000n) << 22n) + this.counter).toString();
  }

  addUser(username: string, bot = false): FakeUser {
    const user: FakeUser = { id: this.snowflake(), username, global_name: bot ? null : username, discriminator: bot ? '0000' : '0', avatar: null, ...(bot ? { bot: true } : {}) };
    this.users.set(user.id, user);
    return user;
  }

  addBot(username: string, options: { token?: string; messageContent?: boolean } = {}): FakeBot {
    const user = this.addUser(username, true);
    const bot: FakeBot = {
      token: options.token ?? `fake-${username.toLowerCase()}-token-${user.id.slice(-6)}`,
      user,
      applicationId: user.id,
      messageContentAllowed: options.messageContent ?? true,
    };
    this.bots.push(bot);
    for (const g of this.guilds.values()) this.joinGuild(g, bot);
    return bot;
  }

  botByToken(token: string | undefined): FakeBot | undefined {
    return token === undefined ? undefined : this.bots.find((b) => b.token === token);
  }

  addGuild(name: string, ownerId: string): FakeGuild {
    const id = this.snowflake();
    const guild: FakeGuild = {
      id,
      name,
      ownerId,
      roles: [{ id, name: '@everyone', permissions: '1024', managed: false }],
      members: new Map([[ownerId, []]]),
      botIds: new Set(),
    };
    this.guilds.set(id, guild);
    for (const bot of this.bots) this.joinGuild(guild, bot);
    return guild;
  }

  /** Bots join every guild, with their managed role (what people mention by accident). */
  private joinGuild(guild: FakeGuild, bot: FakeBot): void {
    const role: FakeRole = { id: this.snowflake(), name: bot.user.username, permissions: '0', managed: true, tags: { bot_id: bot.user.id } };
    guild.roles.push(role);
    guild.members.set(bot.user.id, [role.id]);
    guild.botIds.add(bot.user.id);
  }

  addRole(guildId: string, name: string, permissions = 0n): FakeRole {
    const role: FakeRole = { id: this.snowflake(), name, permissions: String(permissions), managed: false };
    this.guilds.get(guildId)!.roles.push(role);
    return role;
  }

  addMember(guildId: string, userId: string, roleIds: string[] = []): void {
    this.guilds.get(guildId)!.members.set(userId, roleIds);
  }

  addChannel(guildId: string, name: string, options: { type?: ChannelType; parentId?: string } = {}): FakeChannel {
    const channel: FakeChannel = {
      id: this.snowflake(),
      type: options.type ?? ChannelType.GuildText,
      name,
      guild_id: guildId,
      ...(options.parentId ? { parent_id: options.parentId } : {}),
      recipientIds: [],
    };
    this.channels.set(channel.id, channel);
    return channel;
  }

  addThread(parent: FakeChannel, name: string): FakeChannel {
    return this.addChannel(parent.guild_id!, name, { type: ChannelType.PublicThread, parentId: parent.id });
  }

  /** The DM channel between a person and a bot (created on first use, as Discord does). */
  dmChannel(userId: string, botUserId: string): FakeChannel {
    const existing = [...this.channels.values()].find((c) => c.type === ChannelType.DM && c.recipientIds.includes(userId) && c.recipientIds.includes(botUserId));
    if (existing) return existing;
    const channel: FakeChannel = { id: this.snowflake(), type: ChannelType.DM, recipientIds: [userId, botUserId] };
    this.channels.set(channel.id, channel);
    return channel;
  }

  channel(id: string): FakeChannel | undefined {
    return this.channels.get(id);
  }

  channelPayload(c: FakeChannel): Record<string, unknown> {
    if (c.type === ChannelType.DM) {
      return { id: c.id, type: c.type, last_message_id: null, flags: 0, recipients: c.recipientIds.map((id) => this.users.get(id)).filter((u) => u && !u.bot) };
    }
    const base = { id: c.id, type: c.type, name: c.name, guild_id: c.guild_id, flags: 0, last_message_id: null };
    if (c.type === ChannelType.PublicThread) {
      return {
        ...base,
        parent_id: c.parent_id,
        owner_id: this.guilds.get(c.guild_id!)!.ownerId,
        rate_limit_per_user: 0,
        message_count: 0,
        member_count: 1,
        total_message_sent: 0,
        thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false, create_timestamp: new Date().toISOString() },
      };
    }
    return { ...base, position: 0, permission_overwrites: [], parent_id: null, topic: null, nsfw: false, rate_limit_per_user: 0 };
  }

  memberPayload(guildId: string, userId: string): Record<string, unknown> {
    const roles = this.guilds.get(guildId)?.members.get(userId) ?? [];
    return { user: this.users.get(userId), roles, joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0, pending: false, nick: null, avatar: null };
  }

  guildPayload(guildId: string): Record<string, unknown> {
    const g = this.guilds.get(guildId)!;
    const channels = [...this.channels.values()].filter((c) => c.guild_id === g.id);
    return {
      id: g.id,
      name: g.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      owner_id: g.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      roles: g.roles.map((r, i) => ({
        id: r.id,
        name: r.name,
        color: 0,
        colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position: i,
        permissions: r.permissions,
        managed: r.managed,
        mentionable: false,
        flags: 0,
        ...(r.tags ? { tags: r.tags } : {}),
      })),
      emojis: [],
      stickers: [],
      features: [],
      mfa_level: 0,
      application_id: null,
      system_channel_id: null,
      system_channel_flags: 0,
      rules_channel_id: null,
      vanity_url_code: null,
      description: null,
      banner: null,
      premium_tier: 0,
      preferred_locale: 'en-US',
      public_updates_channel_id: null,
      nsfw_level: 0,
      premium_progress_bar_enabled: false,
      safety_alerts_channel_id: null,
      joined_at: new Date(0).toISOString(),
      large: false,
      unavailable: false,
      member_count: g.members.size,
      members: [...g.members.keys()].map((id) => this.memberPayload(g.id, id)),
      channels: channels.filter((c) => c.type !== ChannelType.PublicThread).map((c) => this.channelPayload(c)),
      threads: channels.filter((c) => c.type === ChannelType.PublicThread).map((c) => this.channelPayload(c)),
      voice_states: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  }

  createMessage(input: {
    channelId: string;
    authorId?: string;
    author?: FakeUser;
    content: string;
    replyTo?: string;
    nonce?: string;
    webhookId?: string;
    postedWith?: string;
    flags?: number;
  }): FakeMessage {
    const channel = this.channels.get(input.channelId)!;
    const author = input.author ?? this.users.get(input.authorId!)!;
    const mentions = [...input.content.matchAll(/<@!?(\d+)>/g)].map((m) => this.users.get(m[1]!)).filter((u): u is FakeUser => u !== undefined);
    const mentionRoles = [...input.content.matchAll(/<@&(\d+)>/g)].map((m) => m[1]!);
    const message: FakeMessage = {
      id: this.snowflake(),
      channel_id: channel.id,
      ...(channel.guild_id ? { guild_id: channel.guild_id } : {}),
      author,
      content: input.content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions,
      mention_roles: mentionRoles,
      attachments: [],
      embeds: [],
      components: [],
      pinned: false,
      type: input.replyTo ? 19 : 0,
      flags: input.flags ?? 0,
      ...(input.nonce ? { nonce: input.nonce } : {}),
      ...(input.webhookId ? { webhook_id: input.webhookId } : {}),
      ...(input.replyTo ? { message_reference: { type: 0 as const, message_id: input.replyTo, channel_id: channel.id, ...(channel.guild_id ? { guild_id: channel.guild_id } : {}) } } : {}),
      ...(input.postedWith ? { postedWith: input.postedWith } : {}),
    };
    const list = this.messages.get(channel.id) ?? [];
    list.push(message);
    this.messages.set(channel.id, list);
    return message;
  }

  createInteraction(bot: FakeBot): FakeInteraction {
    const interaction: FakeInteraction = { id: this.snowflake(), token: `interaction-token-${this.counter}`, bot, responses: [] };
    this.interactions.set(interaction.id, interaction);
    return interaction;
  }
}
