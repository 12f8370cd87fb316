// A local fake of the Slack platform for tests, on 127.0.0.1 (port 0):
//  - the Web API at `fake.apiUrl` (Bolt's `clientOptions.slackApiUrl`): auth.test, chat.postMessage,
//    chat.postEphemeral, users.info, conversations.replies, conversations.history, apps.connections.open;
//  - response_url endpoints for slash command answers (`fake.responses`);
//  - the Events API side: signed HTTP deliveries to the app's endpoint (`fake.connectHttp(url, secret)`),
//    or Socket Mode envelopes over a WebSocket it serves (apps.connections.open hands out its URL):
//    message events, and reaction_added / reaction_removed (`fake.react`, `fake.unreact`);
//  - like Slack, every message posted through the API is delivered back to the app as a message event.
// Faults on demand: `fake.failNext('chat.postMessage', { rateLimit: 1 })` answers 429 with Retry-After,
// `{ lostAfterStore: true }` stores the message and then answers 500 (the answer "got lost").
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakeUser {
  id: string;
  name: string;
  realName?: string;
  displayName?: string;
  isAdmin?: boolean;
  isOwner?: boolean;
}

export interface FakeApp {
  token: string;
  name: string;
  userId: string;
  botId: string;
  appId: string;
  scopes: string[];
}

export interface FakeMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  app_id?: string;
  username?: string;
  icon_emoji?: string;
  icon_url?: string;
  text: string;
  blocks?: Record<string, unknown>[];
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  /** Token that posted it (bot posts only). */
  token?: string;
  /** Reactions on it, as `reactions.get` shows them. */
  reactions?: { name: string; users: string[] }[];
}

export interface ApiCall {
  method: string;
  token?: string;
  args: Record<string, unknown>;
  status: number;
}

export type Fault = { rateLimit: number } | { lostAfterStore: true } | { error: string };

export interface Delivery {
  status: number;
  body: string;
}

export interface SlashReply {
  /** HTTP status of the command request (the acknowledgement). */
  status: number;
  /** What the app posted to the command's response_url. */
  reply: Promise<{ response_type?: string; text?: string }>;
}

const sign = (secret: string, timestamp: number, body: string) => `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;

export async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

export class FakeSlack {
  readonly teamId = 'T0FAKE001';
  readonly users = new Map<string, FakeUser>();
  readonly apps: FakeApp[] = [];
  readonly messages: FakeMessage[] = [];
  readonly calls: ApiCall[] = [];
  readonly responses: { id: string; body: { response_type?: string; text?: string } }[] = [];
  /** Socket Mode acknowledgements received, by envelope id. */
  readonly acks = new Map<string, unknown>();
  /** Deliver bot posts back to the app as message events, as Slack does. */
  echo = true;
  private readonly faults: { method: string; fault: Fault }[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private readonly waitingReplies = new Map<string, (body: { response_type?: string; text?: string }) => void>();
  private readonly waitingAcks = new Map<string, () => void>();
  private readonly sockets = new Set<WebSocket>();
  private readonly appTokens = new Map<string, string>(); // xapp token -> app id
  private http?: { url: string; secret: string };
  private lastTs = 0;
  private counter = 0;
  private readonly wss: WebSocketServer;

  private constructor(private readonly server: Server) {
    this.wss = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      if (!req.url?.startsWith('/link')) return socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
    });
  }

  static async start(): Promise<FakeSlack> {
    let fake!: FakeSlack;
    const server = createServer((req, res) => void fake.route(req, res));
    fake = new FakeSlack(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // --- workspace setup -----------------------------------------------------------------------

  addUser(user: FakeUser): FakeUser {
    this.users.set(user.id, user);
    return user;
  }

  /** A Slack app with a bot user; its bot token is returned in `token`. */
  addApp(name: string, scopes: string[] = ['chat:write', 'chat:write.customize', 'users:read', 'channels:history']): FakeApp {
    const n = this.apps.length + 1;
    const app = { token: `xoxb-fake-${name.toLowerCase()}-${n}`, name, userId: `UB${String(n).padStart(6, '0')}`, botId: `B${String(n).padStart(7, '0')}`, appId: `A${String(n).padStart(7, '0')}`, scopes };
    this.apps.push(app);
    return app;
  }

  /** An app-level token for Socket Mode. */
  appToken(app: FakeApp): string {
    const token = `xapp-1-${app.appId}-fake`;
    this.appTokens.set(token, app.appId);
    return token;
  }

  /** Send events to the app's HTTP endpoint, signed with its signing secret. */
  connectHttp(url: string, secret: string): void {
    this.http = { url, secret };
  }

  failNext(method: string, fault: Fault): void {
    this.faults.push({ method, fault });
  }

  // --- messages --------------------------------------------------------------------------------

  private nextTs(): string {
    // Slack ts: seconds.microseconds, strictly increasing per workspace.
    const now = Date.now() * 1000;
    this.lastTs = Math.max(now, this.lastTs + 1);
    return `${Math.floor(this.lastTs / 1e6)}.${String(this.lastTs % 1e6).padStart(6, '0')}`;
  }

  /** Posts by bots in a channel (optionally one thread), oldest first. */
  botPosts(channel: string, threadTs?: string): FakeMessage[] {
    return this.messages.filter((m) => m.channel === channel && m.bot_id && (threadTs === undefined || m.thread_ts === threadTs));
  }

  /** A person writes in a channel (or thread); the message event is delivered to the app. */
  async say(userId: string, channel: string, text: string, threadTs?: string): Promise<{ ts: string; body: Record<string, unknown>; delivery: Delivery | undefined }> {
    const ts = this.nextTs();
    const message: FakeMessage = { channel, ts, user: userId, text, ...(threadTs ? { thread_ts: threadTs } : {}) };
    this.messages.push(message);
    const body = this.eventBody(this.messageEvent(message));
    const delivery = await this.deliver(body);
    return { ts, body, delivery };
  }

  /** Someone adds a reaction (`+1`, `-1::skin-tone-2`, `tada`) to a message: a reaction_added event. */
  async react(userId: string, message: FakeMessage, name: string): Promise<Delivery | undefined> {
    const reactions = (message.reactions ??= []);
    let entry = reactions.find((r) => r.name === name);
    if (!entry) reactions.push((entry = { name, users: [] }));
    if (entry.users.includes(userId)) throw new Error(`fake Slack: ${userId} already reacted :${name}: (Slack answers already_reacted)`);
    entry.users.push(userId);
    return this.deliver(this.eventBody(this.reactionEvent('reaction_added', userId, message, name)));
  }

  /** Someone takes their reaction back: a reaction_removed event (Slack sends one only for a reaction that is there). */
  async unreact(userId: string, message: FakeMessage, name: string): Promise<Delivery | undefined> {
    const entry = message.reactions?.find((r) => r.name === name);
    if (!entry?.users.includes(userId)) throw new Error(`fake Slack: ${userId} has no :${name}: on ${message.ts} (Slack answers no_reaction)`);
    entry.users.splice(entry.users.indexOf(userId), 1);
    if (entry.users.length === 0) message.reactions!.splice(message.reactions!.indexOf(entry), 1);
    return this.deliver(this.eventBody(this.reactionEvent('reaction_removed', userId, message, name)));
  }

  /** Slack's reaction event: the item names the channel and the message ts, never the thread. */
  private reactionEvent(type: 'reaction_added' | 'reaction_removed', userId: string, m: FakeMessage, name: string): Record<string, unknown> {
    return { type, user: userId, reaction: name, ...(m.user ? { item_user: m.user } : {}), item: { type: 'message', channel: m.channel, ts: m.ts }, event_ts: this.nextTs() };
  }

  /** A person's message already in the record, without delivering it (a thread read back later). */
  record(message: Omit<FakeMessage, 'ts'> & { ts?: string }): FakeMessage {
    const m = { ...message, ts: message.ts ?? this.nextTs() };
    this.messages.push(m);
    return m;
  }

  private messageEvent(m: FakeMessage): Record<string, unknown> {
    const channelType = m.channel.startsWith('D') ? 'im' : m.channel.startsWith('G') ? 'group' : 'channel';
    const app = m.bot_id ? this.apps.find((a) => a.botId === m.bot_id) : undefined;
    return {
      type: 'message',
      channel: m.channel,
      channel_type: channelType,
      ts: m.ts,
      event_ts: m.ts,
      text: m.text,
      team: this.teamId,
      ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
      ...(m.user ? { user: m.user } : {}),
      ...(app ? { bot_id: app.botId, app_id: app.appId, user: app.userId, bot_profile: { id: app.botId, name: app.name, app_id: app.appId } } : {}),
      ...(m.username ? { username: m.username } : {}),
      ...(m.blocks ? { blocks: m.blocks } : {}),
    };
  }

  eventBody(event: Record<string, unknown>): Record<string, unknown> {
    const director = this.apps[0];
    return {
      token: 'legacy-verification-token',
      team_id: this.teamId,
      api_app_id: director?.appId,
      event,
      type: 'event_callback',
      event_id: `Ev${String(++this.counter).padStart(8, '0')}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: director ? [{ team_id: this.teamId, user_id: director.userId, is_bot: true, is_enterprise_install: false }] : [],
      is_ext_shared_channel: false,
    };
  }

  // --- the Events API side ------------------------------------------------------------------------

  /**
   * Deliver an Events API body: over HTTP (signed) when connected that way, else over Socket Mode.
   * `retryNum` marks a redelivery; `secret`/`timestamp` override the signature inputs (tests of rejection).
   */
  async deliver(body: Record<string, unknown>, options: { retryNum?: number; secret?: string; timestamp?: number; signature?: string } = {}): Promise<Delivery | undefined> {
    const work = this.http ? this.post(JSON.stringify(body), 'application/json', options) : this.sendEnvelope('events_api', body, options.retryNum);
    this.pending.add(work);
    try {
      return await work;
    } finally {
      this.pending.delete(work);
    }
  }

  private async post(raw: string, contentType: string, options: { retryNum?: number; secret?: string; timestamp?: number; signature?: string } = {}): Promise<Delivery> {
    if (!this.http) throw new Error('connectHttp first');
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const res = await fetch(this.http.url, {
      method: 'POST',
      headers: {
        'content-type': contentType,
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': options.signature ?? sign(options.secret ?? this.http.secret, timestamp, raw),
        ...(options.retryNum ? { 'x-slack-retry-num': String(options.retryNum), 'x-slack-retry-reason': 'http_timeout' } : {}),
      },
      body: raw,
    });
    return { status: res.status, body: await res.text() };
  }

  /** Run `/mascot <text>` as a person in a channel. */
  async slash(userId: string, channel: string, text: string, command = '/mascot'): Promise<SlashReply> {
    const id = String(++this.counter);
    const reply = new Promise<{ response_type?: string; text?: string }>((resolve) => this.waitingReplies.set(id, resolve));
    const user = this.users.get(userId);
    const fields = {
      token: 'legacy-verification-token',
      team_id: this.teamId,
      team_domain: 'fake',
      channel_id: channel,
      channel_name: channel.startsWith('D') ? 'directmessage' : 'meetings',
      user_id: userId,
      user_name: user?.name ?? userId,
      command,
      text,
      api_app_id: this.apps[0]?.appId ?? '',
      is_enterprise_install: 'false',
      response_url: `${this.url}/respond/${id}`,
      trigger_id: `${id}.trigger`,
    };
    const delivery = this.http
      ? await this.post(new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded')
      : await this.sendEnvelope('slash_commands', fields);
    return { status: delivery?.status ?? 0, reply };
  }

  /** Run a message shortcut on a message (e.g. "Recap this thread" inside a thread). */
  async shortcut(userId: string, callbackId: string, message: FakeMessage): Promise<SlashReply> {
    const id = String(++this.counter);
    const reply = new Promise<{ response_type?: string; text?: string }>((resolve) => this.waitingReplies.set(id, resolve));
    const payload = {
      type: 'message_action',
      callback_id: callbackId,
      trigger_id: `${id}.trigger`,
      action_ts: String(Date.now() / 1000),
      team: { id: this.teamId, domain: 'fake' },
      user: { id: userId, name: this.users.get(userId)?.name ?? userId, team_id: this.teamId },
      channel: { id: message.channel, name: 'meetings' },
      message: { type: 'message', ts: message.ts, text: message.text, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}), ...(message.user ? { user: message.user } : {}) },
      response_url: `${this.url}/respond/${id}`,
      message_ts: message.ts,
      is_enterprise_install: false,
    };
    const delivery = await this.post(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), 'application/x-www-form-urlencoded');
    return { status: delivery.status, reply };
  }

  /** True while a delivery is on its way to the app. */
  get busy(): boolean {
    return this.pending.size > 0;
  }

  /** Resolves when every delivery started so far (including echoes of bot posts) has been answered. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  // --- Socket Mode ----------------------------------------------------------------------------------

  get socketCount(): number {
    return this.sockets.size;
  }

  private onSocket(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on('close', () => this.sockets.delete(ws));
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
      if (!msg.envelope_id) return;
      this.acks.set(msg.envelope_id, msg.payload ?? {});
      this.waitingAcks.get(msg.envelope_id)?.();
    });
    ws.send(JSON.stringify({ type: 'hello', num_connections: 1, debug_info: { host: 'fake-slack', approximate_connection_time: 3600 }, connection_info: { app_id: this.apps[0]?.appId } }));
  }

  private async sendEnvelope(type: string, payload: Record<string, unknown>, retryNum?: number): Promise<Delivery | undefined> {
    const ws = [...this.sockets][0];
    if (!ws) return undefined;
    const envelopeId = randomUUID();
    const acked = new Promise<void>((resolve) => this.waitingAcks.set(envelopeId, resolve));
    ws.send(JSON.stringify({ envelope_id: envelopeId, type, payload, accepts_response_payload: type !== 'events_api', ...(retryNum ? { retry_attempt: retryNum, retry_reason: 'timeout' } : { retry_attempt: 0 }) }));
    await Promise.race([acked, new Promise((r) => setTimeout(r, 5000))]);
    return { status: this.acks.has(envelopeId) ? 200 : 0, body: JSON.stringify(this.acks.get(envelopeId) ?? null) };
  }

  // --- the Web API ------------------------------------------------------------------------------------

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.startsWith('/respond/')) {
      const id = path.slice('/respond/'.length);
      const body = JSON.parse(raw) as { response_type?: string; text?: string };
      this.responses.push({ id, body });
      this.waitingReplies.get(id)?.(body);
      res.writeHead(200).end('ok');
      return;
    }
    if (!path.startsWith('/api/')) {
      res.writeHead(404).end();
      return;
    }
    const method = path.slice('/api/'.length);
    const args = this.parseArgs(raw, req.headers['content-type'] ?? '');
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : typeof args.token === 'string' ? args.token : undefined;
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.calls.push({ method, token, args, status });
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };

    const faultAt = this.faults.findIndex((f) => f.method === method);
    const fault = faultAt >= 0 ? this.faults.splice(faultAt, 1)[0]!.fault : undefined;
    if (fault && 'rateLimit' in fault) return reply(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(fault.rateLimit) });
    if (fault && 'error' in fault) return reply(200, { ok: false, error: fault.error });

    if (method === 'apps.connections.open') {
      const appId = token ? this.appTokens.get(token) : undefined;
      if (!appId) return reply(200, { ok: false, error: 'invalid_auth' });
      return reply(200, { ok: true, url: `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/link?ticket=${randomUUID()}&app_id=${appId}` });
    }
    const app = this.apps.find((a) => a.token === token);
    if (!app) return reply(200, { ok: false, error: token ? 'invalid_auth' : 'not_authed' });

    switch (method) {
      case 'auth.test':
        return reply(200, { ok: true, url: 'https://fake.slack.com/', team: 'Fake Team', user: app.name.toLowerCase(), team_id: this.teamId, user_id: app.userId, bot_id: app.botId, is_enterprise_install: false });
      case 'chat.postMessage': {
        const channel = String(args.channel ?? '');
        if (!channel) return reply(200, { ok: false, error: 'channel_not_found' });
        if (!args.text && !args.blocks) return reply(200, { ok: false, error: 'no_text' });
        const customize = app.scopes.includes('chat:write.customize');
        const message: FakeMessage = {
          channel,
          ts: this.nextTs(),
          text: String(args.text ?? ''),
          bot_id: app.botId,
          app_id: app.appId,
          user: app.userId,
          token: app.token,
          ...(args.thread_ts ? { thread_ts: String(args.thread_ts) } : {}),
          // Without chat:write.customize Slack ignores a name or icon given per message.
          ...(customize && args.username ? { username: String(args.username) } : {}),
          ...(customize && args.icon_emoji ? { icon_emoji: String(args.icon_emoji) } : {}),
          ...(customize && args.icon_url ? { icon_url: String(args.icon_url) } : {}),
          ...(args.blocks ? { blocks: this.json(args.blocks) as Record<string, unknown>[] } : {}),
          ...(args.metadata ? { metadata: this.json(args.metadata) as FakeMessage['metadata'] } : {}),
        };
        this.messages.push(message);
        if (this.echo) {
          const echo = this.deliver(this.eventBody(this.messageEvent(message))).catch(() => undefined);
          this.pending.add(echo);
          void echo.finally(() => this.pending.delete(echo));
        }
        if (fault && 'lostAfterStore' in fault) return reply(500, { ok: false, error: 'internal_error' });
        return reply(200, { ok: true, channel, ts: message.ts, message: this.view(message, false) });
      }
      case 'chat.postEphemeral':
        return reply(200, { ok: true, message_ts: this.nextTs() });
      case 'users.info': {
        const id = String(args.user ?? '');
        const user = this.users.get(id);
        const bot = this.apps.find((a) => a.userId === id);
        if (!user && !bot) return reply(200, { ok: false, error: 'user_not_found' });
        if (bot) return reply(200, { ok: true, user: { id, team_id: this.teamId, name: bot.name.toLowerCase(), real_name: bot.name, is_bot: true, is_admin: false, is_owner: false, profile: { display_name: bot.name, real_name: bot.name } } });
        return reply(200, {
          ok: true,
          user: {
            id,
            team_id: this.teamId,
            name: user!.name,
            real_name: user!.realName ?? user!.name,
            deleted: false,
            is_bot: false,
            is_admin: user!.isAdmin === true,
            is_owner: user!.isOwner === true,
            is_primary_owner: false,
            profile: { display_name: user!.displayName ?? '', real_name: user!.realName ?? user!.name },
          },
        });
      }
      case 'conversations.replies': {
        const channel = String(args.channel ?? '');
        const root = String(args.ts ?? '');
        if (!this.messages.some((m) => m.channel === channel && m.ts === root)) return reply(200, { ok: false, error: 'thread_not_found' });
        const all = this.messages.filter((m) => m.channel === channel && (m.ts === root || m.thread_ts === root)).sort((a, b) => Number(a.ts) - Number(b.ts));
        const oldest = args.oldest ? Number(args.oldest) : 0;
        return reply(200, this.page(all.filter((m) => Number(m.ts) >= oldest), args));
      }
      case 'conversations.history': {
        const channel = String(args.channel ?? '');
        const oldest = args.oldest ? Number(args.oldest) : 0;
        const top = this.messages.filter((m) => m.channel === channel && (!m.thread_ts || m.thread_ts === m.ts) && Number(m.ts) >= oldest).sort((a, b) => Number(b.ts) - Number(a.ts));
        return reply(200, this.page(top, args));
      }
      default:
        return reply(200, { ok: false, error: 'unknown_method' });
    }
  }

  private page(messages: FakeMessage[], args: Record<string, unknown>): Record<string, unknown> {
    const limit = Math.min(Number(args.limit ?? 100) || 100, 1000);
    const offset = Number(args.cursor ?? 0) || 0;
    const withMeta = args.include_all_metadata === true || args.include_all_metadata === 'true';
    const slice = messages.slice(offset, offset + limit);
    const more = offset + limit < messages.length;
    return { ok: true, messages: slice.map((m) => this.view(m, withMeta)), has_more: more, response_metadata: { next_cursor: more ? String(offset + limit) : '' } };
  }

  /** A message as the API shows it. */
  private view(m: FakeMessage, withMetadata: boolean): Record<string, unknown> {
    const { token: _token, metadata, ...rest } = m;
    return { type: 'message', ...rest, ...(withMetadata && metadata ? { metadata } : {}) };
  }

  private json(value: unknown): unknown {
    return typeof value === 'string' ? JSON.parse(value) : value;
  }

  private parseArgs(raw: string, contentType: string): Record<string, unknown> {
    if (!raw) return {};
    if (contentType.includes('application/json')) return JSON.parse(raw) as Record<string, unknown>;
    return Object.fromEntries(new URLSearchParams(raw));
  }
}
