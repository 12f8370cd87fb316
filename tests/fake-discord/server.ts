// A local fake Discord for end-to-end tests: the REST routes our adapter calls plus a WebSocket
// gateway (HELLO, IDENTIFY, READY, GUILD_CREATE, heartbeats, RESUME, dispatches), enough for the
// real discord.js Client to log in through `rest: { api: fake.api }` and talk to it.
// Every REST request is recorded with the bot token that made it; faults can be injected.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { ChannelType, GatewayDispatchEvents, GatewayIntentBits, GatewayOpcodes } from 'discord.js';
import { FakeState, type FakeBot, type FakeChannel, type FakeMessage } from './state.ts';
import { routeRequest, type RouteResult } from './routes.ts';

export interface RecordedRequest {
  method: string;
  /** Path after /api/v10, e.g. /channels/123/messages. */
  path: string;
  query: Record<string, string>;
  /** Bot token from `Authorization: Bot <token>`, if any. */
  token: string | undefined;
  body: unknown;
  status: number;
  at: number;
}

export interface Fault {
  method: string;
  path: RegExp;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Run the route first, then answer with the fault (a response lost after the server acted). */
  afterHandling?: boolean;
  times: number;
}

interface GatewaySession {
  id: string;
  bot: FakeBot;
  intents: number;
  seq: number;
  socket: WebSocket | undefined;
  /** Dispatches sent while disconnected, replayed on RESUME. */
  missed: { t: string; d: unknown; s: number }[];
  resumed: number;
}

const HEARTBEAT_INTERVAL = 41_250;

/** What a client sends on the gateway, as far as the fake reads it. */
interface GatewayPayload {
  op: number;
  d: { token?: string; intents?: number; session_id?: string } | null;
}

export class FakeDiscord {
  readonly state = new FakeState();
  readonly requests: RecordedRequest[] = [];
  readonly gatewayLog: { token: string; op: number; d: unknown }[] = [];
  private readonly faults: Fault[] = [];
  /** Discord's per-channel message limit for bots, as a sliding window; unset: no limit. */
  channelLimit: { messages: number; windowMs: number } | undefined;
  private readonly sessions = new Map<string, GatewaySession>();
  private readonly waiters = new Set<() => void>();
  private sessionCounter = 0;

  private constructor(
    private readonly server: http.Server,
    private readonly wss: WebSocketServer,
    readonly port: number,
  ) {}

  static async start(): Promise<FakeDiscord> {
    const server = http.createServer();
    const wss = new WebSocketServer({ noServer: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const fake = new FakeDiscord(server, wss, (server.address() as AddressInfo).port);
    server.on('request', (req, res) => void fake.onRequest(req, res));
    server.on('upgrade', (req, socket, head) => {
      if (!req.url?.startsWith('/gateway')) return socket.destroy();
      wss.handleUpgrade(req, socket, head, (ws) => fake.onSocket(ws));
    });
    return fake;
  }

  /** What to give discord.js as `rest.api` (and our DISCORD_API_BASE_URL). */
  get api(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}/gateway`;
  }

  async close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // --- test controls ----------------------------------------------------------------------

  /** Answer the next `times` matching requests with an error (e.g. 429, 502). */
  fail(fault: Omit<Fault, 'times'> & { times?: number }): void {
    this.faults.push({ times: 1, ...fault });
  }

  /** Resolve when `check` holds, re-checked after every request and dispatch. */
  async waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
    const first = check();
    if (first) return first;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(poll);
        reject(new Error(`fake Discord: timed out waiting for ${what}`));
      }, timeoutMs);
      const poll = () => {
        const value = check();
        if (!value) return;
        clearTimeout(timer);
        this.waiters.delete(poll);
        resolve(value);
      };
      this.waiters.add(poll);
    });
  }

  /** True when the bot with this token has a live, identified gateway session. */
  connected(token: string): boolean {
    return [...this.sessions.values()].some((s) => s.bot.token === token && s.socket?.readyState === WebSocket.OPEN);
  }

  sessionOf(token: string): { resumed: number; id: string } | undefined {
    return [...this.sessions.values()].find((s) => s.bot.token === token);
  }

  /** Drop a bot's gateway connection as a network failure would (the client should resume). */
  dropConnection(token: string, code = 4000): void {
    for (const s of this.sessions.values()) if (s.bot.token === token) s.socket?.close(code, 'fake Discord dropped the connection');
  }

  /** A person posts in a channel: stored and dispatched as MESSAGE_CREATE, as Discord would. */
  say(channelId: string, authorId: string, content: string, options: { replyTo?: string } = {}): FakeMessage {
    const message = this.state.createMessage({ channelId, authorId, content, ...(options.replyTo ? { replyTo: options.replyTo } : {}) });
    this.dispatchMessage(message);
    return message;
  }

  /** A person (or bot) reacts to a message: MESSAGE_REACTION_ADD, with the member as Discord sends it. */
  react(channelId: string, messageId: string, userId: string, emoji: string): void {
    this.reactionEvent(GatewayDispatchEvents.MessageReactionAdd, channelId, messageId, userId, emoji);
  }

  /** A person takes a reaction back: MESSAGE_REACTION_REMOVE, which carries only the user's id. */
  unreact(channelId: string, messageId: string, userId: string, emoji: string): void {
    this.reactionEvent(GatewayDispatchEvents.MessageReactionRemove, channelId, messageId, userId, emoji);
  }

  private reactionEvent(t: GatewayDispatchEvents, channelId: string, messageId: string, userId: string, emoji: string): void {
    const channel = this.state.channel(channelId)!;
    const added = t === GatewayDispatchEvents.MessageReactionAdd;
    const message = this.state.messages.get(channelId)?.find((m) => m.id === messageId);
    const d: Record<string, unknown> = {
      user_id: userId,
      channel_id: channelId,
      message_id: messageId,
      emoji: { id: null, name: emoji },
      burst: false,
      type: 0,
      ...(added && message ? { message_author_id: message.author.id } : {}),
    };
    if (channel.guild_id) {
      d.guild_id = channel.guild_id;
      if (added) d.member = this.state.memberPayload(channel.guild_id, userId);
    }
    const intent = channel.guild_id ? GatewayIntentBits.GuildMessageReactions : GatewayIntentBits.DirectMessageReactions;
    for (const s of this.sessions.values()) if (this.canSee(s.bot, channel) && s.intents & intent) this.dispatch(s, t, d);
  }

  /**
   * A person uses a slash command of `bot`'s application: INTERACTION_CREATE. `options` is the
   * nested option tree as Discord sends it. Returns the interaction id and token.
   */
  interact(
    bot: FakeBot,
    input: { channelId: string; userId: string; name: string; options: unknown[]; permissions?: bigint; autocomplete?: boolean },
  ): { id: string; token: string } {
    const channel = this.state.channel(input.channelId)!;
    const commandId = this.state.commands.get(bot.applicationId)?.find((c) => c.name === input.name)?.id ?? this.state.snowflake();
    const interaction = this.state.createInteraction(bot);
    const base = {
      id: interaction.id,
      application_id: bot.applicationId,
      type: input.autocomplete ? 4 : 2,
      token: interaction.token,
      version: 1,
      data: { id: commandId, name: input.name, type: 1, options: input.options },
      channel_id: channel.id,
      channel: this.state.channelPayload(channel),
      app_permissions: '8',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: channel.guild_id ? { '0': channel.guild_id } : { '1': input.userId },
      context: channel.guild_id ? 0 : 1,
      attachment_size_limit: 10_485_760,
    };
    const d = channel.guild_id
      ? {
          ...base,
          guild_id: channel.guild_id,
          guild_locale: 'en-US',
          guild: { id: channel.guild_id, locale: 'en-US', features: [] },
          member: { ...this.state.memberPayload(channel.guild_id, input.userId), permissions: String(input.permissions ?? 0n) },
        }
      : { ...base, user: this.state.users.get(input.userId) };
    for (const s of this.sessions.values()) if (s.bot === bot) this.dispatch(s, GatewayDispatchEvents.InteractionCreate, d);
    return interaction;
  }

  /** Announce a thread created after the bots connected (THREAD_CREATE). */
  announceThread(thread: FakeChannel): void {
    for (const s of this.sessions.values())
      if (s.intents & GatewayIntentBits.Guilds && this.canSee(s.bot, thread)) this.dispatch(s, GatewayDispatchEvents.ThreadCreate, { ...this.state.channelPayload(thread), newly_created: true });
  }

  // --- REST --------------------------------------------------------------------------------

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = undefined;
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bot ') ? auth.slice(4) : undefined;
    const path = url.pathname.replace(/^\/api(\/v\d+)?/, '');
    const method = req.method ?? 'GET';
    const record: RecordedRequest = { method, path, query: Object.fromEntries(url.searchParams), token, body, status: 0, at: Date.now() };
    this.requests.push(record);

    const fault = this.faults.find((f) => f.times > 0 && f.method === method && f.path.test(path));
    const limited = method === 'POST' ? this.channelLimited(path) : undefined;
    let result: RouteResult;
    if (limited) {
      result = limited;
    } else if (fault && !fault.afterHandling) {
      fault.times--;
      result = faultResult(fault);
    } else {
      result = routeRequest(this.state, { method, path, query: url.searchParams, token, body }, { gatewayUrl: this.gatewayUrl, dispatchMessage: (m) => this.dispatchMessage(m) });
      if (fault?.afterHandling) {
        fault.times--;
        result = faultResult(fault);
      }
    }
    record.status = result.status;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...result.headers };
    if (result.body === undefined) {
      res.writeHead(result.status, result.headers ?? {});
      res.end();
    } else {
      res.writeHead(result.status, headers);
      res.end(JSON.stringify(result.body));
    }
    this.wake();
  }

  /** A 429 when a bot message would exceed the channel limit in the last window. */
  private channelLimited(path: string): RouteResult | undefined {
    const m = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (!m || !this.channelLimit) return undefined;
    const { messages, windowMs } = this.channelLimit;
    const now = Date.now();
    const recent = (this.state.messages.get(m[1]!) ?? []).filter((msg) => msg.postedWith && now - Date.parse(msg.timestamp) < windowMs);
    if (recent.length < messages) return undefined;
    const retryAfter = (Date.parse(recent[0]!.timestamp) + windowMs - now) / 1000;
    return faultResult({ method: 'POST', path: /./, status: 429, times: 0, headers: { 'retry-after': retryAfter.toFixed(3) } });
  }

  // --- gateway -----------------------------------------------------------------------------

  private onSocket(ws: WebSocket): void {
    let session: GatewaySession | undefined;
    this.send(ws, { op: GatewayOpcodes.Hello, d: { heartbeat_interval: HEARTBEAT_INTERVAL }, s: null, t: null });
    ws.on('message', (data) => {
      let payload: GatewayPayload;
      try {
        payload = JSON.parse(String(data)) as GatewayPayload;
      } catch {
        return ws.close(4002, 'Error while decoding payload.');
      }
      this.gatewayLog.push({ token: session?.bot.token ?? payload.d?.token ?? '', op: payload.op, d: payload.d });
      switch (payload.op) {
        case GatewayOpcodes.Heartbeat:
          this.send(ws, { op: GatewayOpcodes.HeartbeatAck, d: null, s: null, t: null });
          break;
        case GatewayOpcodes.Identify: {
          const bot = this.state.botByToken(payload.d?.token);
          if (!bot) return ws.close(4004, 'Authentication failed.');
          const intents = Number(payload.d?.intents);
          if (intents & GatewayIntentBits.MessageContent && !bot.messageContentAllowed) return ws.close(4014, 'Disallowed intent(s).');
          session = { id: `session-${++this.sessionCounter}`, bot, intents, seq: 0, socket: ws, missed: [], resumed: 0 };
          this.sessions.set(session.id, session);
          this.ready(session);
          break;
        }
        case GatewayOpcodes.Resume: {
          const old = this.sessions.get(payload.d?.session_id ?? '');
          if (!old || old.bot.token !== payload.d?.token) {
            this.send(ws, { op: GatewayOpcodes.InvalidSession, d: false, s: null, t: null });
            break;
          }
          session = old;
          session.socket = ws;
          session.resumed++;
          for (const m of session.missed.splice(0)) this.send(ws, { op: GatewayOpcodes.Dispatch, ...m });
          this.dispatch(session, GatewayDispatchEvents.Resumed, {});
          break;
        }
        default:
          break;
      }
      this.wake();
    });
    ws.on('close', () => {
      if (session?.socket === ws) session.socket = undefined;
      this.wake();
    });
  }

  private ready(session: GatewaySession): void {
    const { bot } = session;
    const guilds = [...this.state.guilds.values()].filter((g) => g.botIds.has(bot.user.id));
    this.dispatch(session, GatewayDispatchEvents.Ready, {
      v: 10,
      user: { ...bot.user, verified: true, mfa_enabled: false, flags: 0 },
      guilds: guilds.map((g) => ({ id: g.id, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: this.gatewayUrl,
      shard: [0, 1],
      application: { id: bot.applicationId, flags: 0 },
      private_channels: [],
      presences: [],
      relationships: [],
      guild_join_requests: [],
      user_settings: {},
      _trace: ['fake-discord'],
    });
    for (const g of guilds) if (session.intents & GatewayIntentBits.Guilds) this.dispatch(session, GatewayDispatchEvents.GuildCreate, this.state.guildPayload(g.id));
  }

  private dispatch(session: GatewaySession, t: string, d: unknown): void {
    const s = ++session.seq;
    if (session.socket?.readyState === WebSocket.OPEN) this.send(session.socket, { op: GatewayOpcodes.Dispatch, t, d, s });
    else session.missed.push({ t, d, s });
    this.wake();
  }

  private send(ws: WebSocket, payload: unknown): void {
    ws.send(JSON.stringify(payload));
  }

  private canSee(bot: FakeBot, channel: FakeChannel): boolean {
    if (channel.guild_id) return this.state.guilds.get(channel.guild_id)?.botIds.has(bot.user.id) ?? false;
    return channel.recipientIds.includes(bot.user.id);
  }

  /** MESSAGE_CREATE to every bot that would get it, with content hidden without MessageContent. */
  private dispatchMessage(message: FakeMessage): void {
    const channel = this.state.channel(message.channel_id)!;
    const guild = channel.guild_id !== undefined;
    for (const s of this.sessions.values()) {
      if (!this.canSee(s.bot, channel)) continue;
      if (!(s.intents & (guild ? GatewayIntentBits.GuildMessages : GatewayIntentBits.DirectMessages))) continue;
      const own = message.author.id === s.bot.user.id;
      const mentioned = message.mentions.some((u) => u.id === s.bot.user.id);
      const content = guild && !own && !mentioned && !(s.intents & GatewayIntentBits.MessageContent) ? '' : message.content;
      const d: Record<string, unknown> = { ...message, content, channel_type: channel.type === ChannelType.DM ? 1 : channel.type };
      if (guild && !message.webhook_id) d.member = this.state.memberPayload(channel.guild_id!, message.author.id);
      this.dispatch(s, GatewayDispatchEvents.MessageCreate, d);
    }
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

function faultResult(f: Fault): RouteResult {
  if (f.status === 429) {
    const retryAfter = f.headers?.['retry-after'] ?? '0.05';
    return {
      status: 429,
      headers: { 'retry-after': retryAfter, 'x-ratelimit-scope': 'user', ...f.headers },
      body: f.body ?? { message: 'You are being rate limited.', retry_after: Number(retryAfter), global: false },
    };
  }
  return { status: f.status, headers: f.headers, body: f.body ?? { message: `${f.status}: fake failure`, code: 0 } };
}
