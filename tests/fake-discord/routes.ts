// The REST routes of the fake Discord: the ones the adapter and discord.js call. Errors use
// Discord's JSON error shape ({ code, message, errors }) and codes.
import { ChannelType } from 'discord.js';
import type { FakeBot, FakeMessage, FakeState, InteractionResponseData } from './state.ts';

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  token: string | undefined;
  body: unknown;
}

/** The request body fields the fake looks at (Discord's JSON, loosely). */
interface Body {
  content?: unknown;
  embeds?: unknown;
  nonce?: unknown;
  enforce_nonce?: unknown;
  flags?: unknown;
  message_reference?: { message_id?: string; fail_if_not_exists?: boolean };
  username?: unknown;
  avatar_url?: unknown;
  name?: unknown;
  type?: unknown;
  data?: InteractionResponseData;
}
type Handler = (m: RegExpExecArray, req: RouteRequest, bot: FakeBot | undefined) => RouteResult;

const MAX_CONTENT = 2000;
const NONCE_WINDOW_MS = 5 * 60_000;

const error = (status: number, code: number, message: string, errors?: unknown): RouteResult => ({ status, body: { code, message, ...(errors ? { errors } : {}) } });
const unauthorized = (): RouteResult => error(401, 0, '401: Unauthorized');
const json = (body: unknown, status = 200): RouteResult => ({ status, body });
const noContent = (): RouteResult => ({ status: 204 });

function publicMessage(m: FakeMessage): Omit<FakeMessage, 'postedWith'> {
  const { postedWith: _ignored, ...rest } = m;
  return rest;
}

function checkContent(body: Body): RouteResult | undefined {
  const content = typeof body.content === 'string' ? body.content : '';
  if (content.length > MAX_CONTENT)
    return error(400, 50035, 'Invalid Form Body', { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${MAX_CONTENT} or fewer in length.` }] } });
  if (content.trim() === '' && !(Array.isArray(body.embeds) && body.embeds.length > 0)) return error(400, 50006, 'Cannot send an empty message');
  return undefined;
}

export interface RouteContext {
  gatewayUrl: string;
  /** MESSAGE_CREATE to the bots that would see a message created through the API. */
  dispatchMessage: (m: FakeMessage) => void;
}

export function routeRequest(state: FakeState, req: RouteRequest, ctx: RouteContext): RouteResult {
  const { dispatchMessage } = ctx;
  const bot = state.botByToken(req.token);
  const routes: [string, RegExp, boolean, Handler][] = [
    ['GET', /^\/gateway\/bot$/, true, () => json({ url: ctx.gatewayUrl, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 } })],
    ['GET', /^\/users\/@me$/, true, (_m, _r, b) => json(b!.user)],
    ['GET', /^\/channels\/(\d+)$/, true, (m, _r, b) => {
      const channel = state.channel(m[1]!);
      if (!channel || !canUse(state, b!, m[1]!)) return error(404, 10003, 'Unknown Channel');
      return json(state.channelPayload(channel));
    }],
    ['POST', /^\/channels\/(\d+)\/typing$/, true, (m, _r, b) => (canUse(state, b!, m[1]!) ? noContent() : error(404, 10003, 'Unknown Channel'))],
    ['POST', /^\/channels\/(\d+)\/messages$/, true, (m, r, b) => createMessage(state, b!, m[1]!, (r.body ?? {}) as Body, dispatchMessage)],
    ['GET', /^\/channels\/(\d+)\/webhooks$/, true, (m) => json([...state.webhooks.values()].filter((w) => w.channel_id === m[1]))],
    ['POST', /^\/channels\/(\d+)\/webhooks$/, true, (m, r, b) => {
      const channel = state.channel(m[1]!);
      if (!channel?.guild_id || channel.type !== ChannelType.GuildText) return error(400, 50024, 'Cannot execute action on this channel type');
      const name = String((r.body as Body | undefined)?.name ?? '');
      if (!name || name.length > 80) return error(400, 50035, 'Invalid Form Body', { name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 80 in length.' }] } });
      const id = state.snowflake();
      const hook = { id, token: `webhook-token-${id}`, type: 1 as const, name, channel_id: channel.id, guild_id: channel.guild_id, application_id: b!.applicationId, avatar: null, user: b!.user };
      state.webhooks.set(id, hook);
      return json(hook);
    }],
    ['DELETE', /^\/webhooks\/(\d+)$/, true, (m) => (state.webhooks.delete(m[1]!) ? noContent() : error(404, 10015, 'Unknown Webhook'))],
    ['POST', /^\/webhooks\/(\d+)\/([^/]+)$/, false, (m, r) => executeWebhook(state, m[1]!, m[2]!, r, dispatchMessage)],
    ['PATCH', /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/, false, (m, r) => {
      const interaction = [...state.interactions.values()].find((i) => i.token === m[2]);
      if (!interaction) return error(404, 10015, 'Unknown Webhook');
      interaction.responses.push({ type: 0, data: r.body as InteractionResponseData });
      return json({ id: state.snowflake(), content: (r.body as Body).content ?? '' });
    }],
    ['PUT', /^\/applications\/(\d+)\/commands$/, true, (m, r, b) => {
      if (b!.applicationId !== m[1]) return error(403, 50001, 'Missing Access');
      const list = ((r.body ?? []) as Body[]).map((c) => ({ ...c, id: state.snowflake(), application_id: m[1]!, version: state.snowflake(), name: String(c.name) }));
      state.commands.set(m[1]!, list);
      return json(list);
    }],
    ['PUT', /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/, true, (m, r, b) => {
      if (b!.applicationId !== m[1]) return error(403, 50001, 'Missing Access');
      const list = ((r.body ?? []) as Body[]).map((c) => ({ ...c, id: state.snowflake(), application_id: m[1]!, guild_id: m[2]!, version: state.snowflake() }));
      state.guildCommands.set(`${m[1]}/${m[2]}`, list);
      state.commands.set(m[1]!, list as never);
      return json(list);
    }],
    ['POST', /^\/interactions\/(\d+)\/([^/]+)\/callback$/, false, (m, r) => {
      const interaction = state.interactions.get(m[1]!);
      if (!interaction || interaction.token !== m[2]) return error(404, 10062, 'Unknown interaction');
      if (interaction.responses.some((x) => x.type !== 0)) return error(400, 40060, 'Interaction has already been acknowledged.');
      const body = (r.body ?? {}) as Body;
      interaction.responses.push({ type: Number(body.type), data: body.data });
      return r.query.get('with_response') === 'true' ? json({ interaction: { id: interaction.id, type: 2 } }) : noContent();
    }],
  ];
  for (const [method, pattern, needsAuth, handler] of routes) {
    const m = pattern.exec(req.path);
    if (!m || method !== req.method) continue;
    if (needsAuth && !bot) return unauthorized();
    return handler(m, req, bot);
  }
  return error(404, 0, `404: Not Found (fake Discord has no ${req.method} ${req.path})`);
}

function canUse(state: FakeState, bot: FakeBot, channelId: string): boolean {
  const channel = state.channel(channelId);
  if (!channel) return false;
  if (channel.guild_id) return state.guilds.get(channel.guild_id)?.botIds.has(bot.user.id) ?? false;
  return channel.recipientIds.includes(bot.user.id);
}

function createMessage(state: FakeState, bot: FakeBot, channelId: string, body: Body, dispatchMessage: (m: FakeMessage) => void): RouteResult {
  if (!state.channel(channelId) || !canUse(state, bot, channelId)) return error(404, 10003, 'Unknown Channel');
  const bad = checkContent(body);
  if (bad) return bad;
  const nonce = body.nonce === undefined ? undefined : String(body.nonce);
  if (nonce !== undefined && nonce.length > 25) return error(400, 50035, 'Invalid Form Body', { nonce: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be 25 or fewer in length.' }] } });
  // enforce_nonce: the same nonce from the same bot within a few minutes returns the first message.
  if (nonce !== undefined && body.enforce_nonce === true) {
    const since = Date.now() - NONCE_WINDOW_MS;
    const existing = state.messages.get(channelId)?.find((m) => m.nonce === nonce && m.postedWith === bot.token && Date.parse(m.timestamp) >= since);
    if (existing) return json(publicMessage(existing));
  }
  const replyTo = body.message_reference?.message_id as string | undefined;
  if (replyTo && !state.messages.get(channelId)?.some((m) => m.id === replyTo) && body.message_reference?.fail_if_not_exists !== false)
    return error(400, 50035, 'Invalid Form Body', { message_reference: { _errors: [{ code: 'REPLIES_UNKNOWN_MESSAGE', message: 'Unknown message' }] } });
  const message = state.createMessage({
    channelId,
    author: bot.user,
    content: String(body.content),
    ...(replyTo ? { replyTo } : {}),
    ...(nonce !== undefined ? { nonce } : {}),
    postedWith: bot.token,
    flags: Number(body.flags ?? 0),
  });
  dispatchMessage(message);
  return json(publicMessage(message));
}

function executeWebhook(state: FakeState, id: string, token: string, req: RouteRequest, dispatchMessage: (m: FakeMessage) => void): RouteResult {
  const body = (req.body ?? {}) as Body;
  // Interaction follow-ups use the application id and the interaction token.
  const interaction = [...state.interactions.values()].find((i) => i.bot.applicationId === id && i.token === token);
  if (interaction) {
    interaction.responses.push({ type: 0, data: body as InteractionResponseData });
    return json({ id: state.snowflake(), channel_id: '0', content: body.content ?? '', flags: body.flags ?? 0 });
  }
  const hook = state.webhooks.get(id);
  if (!hook || hook.token !== token) return error(404, 10015, 'Unknown Webhook');
  const bad = checkContent(body);
  if (bad) return bad;
  const threadId = req.query.get('thread_id');
  const channelId = threadId ?? hook.channel_id;
  const channel = state.channel(channelId);
  if (!channel || (threadId && channel.parent_id !== hook.channel_id)) return error(400, 10003, 'Unknown Channel');
  const username = typeof body.username === 'string' && body.username ? body.username : hook.name;
  const author = { id: hook.id, username, global_name: null, discriminator: '0000', avatar: null, bot: true };
  const message = state.createMessage({ channelId, author, content: String(body.content), webhookId: hook.id });
  dispatchMessage(message);
  return req.query.get('wait') === 'true' ? json(publicMessage(message)) : noContent();
}
