// The Slack platform: Bolt with either receiver (Socket Mode for a quick start, the HTTP receiver
// with signing-secret verification for production), translating events into ChatEvents for the
// engine, reactions into feedback in the store, and slash commands into the verb core. Events are
// acknowledged by Bolt before we see them; we hand them on in order per conversation and never
// make Slack wait for a round.
import type { Server } from 'node:http';
import { App, HTTPReceiver, LogLevel, SocketModeReceiver, webApi, type Logger as BoltLogger, type Receiver } from '@slack/bolt';
import type { Logger } from '../../log.ts';
import type { Persona } from '../../persona/schema.ts';
import type { Runtime } from '../../runtime.ts';
import { channelKeyOf } from '../../session/engine.ts';
import type { Platform } from '../platform.ts';
import { handleSlashCommand, runRecap, type CommandDeps } from './commands.ts';
import { SlackDirectory } from './directory.ts';
import { SlackIdentities, type WebClient } from './identities.ts';
import { conversationOf, toChatEvent, type InboundContext, type SlackMessageEvent } from './inbound.ts';
import { turnMessage } from './message.ts';
import { slackOutlet } from './outlet.ts';
import { ChannelPacer } from './pacer.ts';
import { SlackPoster } from './poster.ts';
import { handleReaction, type SlackReactionEvent } from './reactions.ts';
import { EventReceipts } from './receipts.ts';
import type { SlackSettings } from './settings.ts';

/** Callback id of the "Recap this thread" message shortcut (works inside threads, unlike slash commands). */
export const RECAP_SHORTCUT = 'mascot_recap';
/** How long shutdown waits for messages already being handed to the engine. */
const DRAIN_MS = 5000;

/** Bolt logs through our logger, at our level. */
function boltLogger(log: Logger): BoltLogger {
  const text = (parts: unknown[]) => parts.map((p) => (p instanceof Error ? p.message : typeof p === 'string' ? p : JSON.stringify(p))).join(' ');
  const levels: Record<string, LogLevel> = { trace: LogLevel.DEBUG, debug: LogLevel.DEBUG, info: LogLevel.INFO, warn: LogLevel.WARN };
  let level = levels[log.level] ?? LogLevel.ERROR;
  return {
    debug: (...m) => log.debug(text(m)),
    info: (...m) => log.info(text(m)),
    warn: (...m) => log.warn(text(m)),
    error: (...m) => log.error(text(m)),
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

export const allPersonas = (runtime: Pick<Runtime, 'packs'>): Persona[] => [...runtime.packs.values()].flatMap((p) => p.personas);

export class SlackPlatform implements Platform {
  readonly name = 'slack';
  private app: App | undefined;
  private server: Server | undefined;
  private readonly log: Logger;
  private readonly pacer: ChannelPacer;
  private readonly receipts: EventReceipts;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly handoff = new Map<string, Promise<void>>();
  private identities!: SlackIdentities;
  private poster!: SlackPoster;
  private inbound!: InboundContext;
  private commands!: CommandDeps;

  constructor(
    private readonly runtime: Runtime,
    private readonly settings: SlackSettings,
  ) {
    this.log = runtime.log.child({ platform: 'slack' });
    this.pacer = new ChannelPacer({ minIntervalMs: settings.pacingMs, log: this.log });
    this.receipts = new EventReceipts(runtime.db);
  }

  /** Port the HTTP receiver listens on, once started (0 asks the system for a free one). */
  get port(): number | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  async start(): Promise<void> {
    const { settings, runtime } = this;
    const logger = boltLogger(this.log);
    const base = { logger, ...(settings.apiUrl ? { slackApiUrl: settings.apiUrl } : {}) };
    // Posting clients never retry on their own: the poster decides (pacing, rate limits, no doubles).
    const postingClient = (token: string): WebClient => new webApi.WebClient(token, { ...base, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
    const reader = new webApi.WebClient(settings.botToken, { ...base, retryConfig: { retries: 3, factor: 2, minTimeout: 250, maxTimeout: 5000 } });

    const personas = allPersonas(runtime);
    this.identities = await SlackIdentities.connect(settings, personas, postingClient, this.log);
    this.poster = new SlackPoster(this.pacer, reader, this.log);
    const directory = new SlackDirectory(reader, this.log);
    this.inbound = {
      identities: this.identities,
      directory,
      allPersonas: personas,
      personasFor: (c) => runtime.packs.get(runtime.engine.channelConfig(channelKeyOf('slack', c.parentId ?? c.id)).pack)?.personas ?? [],
    };
    this.commands = {
      runtime,
      identities: this.identities,
      directory,
      moderatorIds: settings.moderatorIds,
      recapsRunning: new Set(),
      recap: {
        reader,
        identities: this.identities,
        directory,
        poster: this.poster,
        store: runtime.store,
        packs: runtime.packs,
        // Only a configured model writes recaps; the offline voice's recap is extractive.
        ...(runtime.config.MASCOT_LLM_BASE_URL ? { generator: runtime.generator } : {}),
        log: this.log,
      },
    };

    const receiver: Receiver =
      settings.receiver === 'socket'
        ? new SocketModeReceiver({
            appToken: settings.appToken!,
            logger,
            // Bolt hands the Web API options to the Socket Mode client only through installerOptions.
            installerOptions: { clientOptions: { ...base } },
          })
        : new HTTPReceiver({
            signingSecret: settings.signingSecret!,
            endpoints: settings.eventsPath,
            logger,
            customRoutes: [{ path: '/healthz', method: ['GET'], handler: (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok') }],
          });
    const app = new App({
      token: settings.botToken,
      botId: this.identities.director.botId,
      botUserId: this.identities.director.userId,
      tokenVerificationEnabled: false, // verified above, with an error that names the variable
      receiver,
      logger,
      clientOptions: base,
      convoStore: false,
      deferInitialization: true,
    });
    await app.init();
    this.listen(app);
    this.app = app;
    if (settings.receiver === 'http') {
      this.server = (await app.start({ port: settings.port, ...(settings.host ? { host: settings.host } : {}) })) as Server;
      this.log.info({ port: this.port, path: settings.eventsPath }, 'slack events endpoint listening');
    } else {
      await app.start();
      this.log.info('slack socket mode connected');
    }
  }

  private listen(app: App): void {
    // Slack redelivers events it thinks we missed; the first delivery of an event id is the one.
    app.use(async ({ body, next }) => {
      const eventId = (body as { event_id?: unknown }).event_id;
      if (typeof eventId === 'string') {
        const teamId = (body as { team_id?: string }).team_id;
        const first = this.runtime.store.safely('slack event receipt', () => this.receipts.firstDelivery(eventId, teamId));
        if (first === false) {
          this.log.info({ eventId }, 'slack redelivered an event already handled; dropped');
          return;
        }
      }
      await next();
    });
    const onMessage = async ({ event, body }: { event: unknown; body: { team_id?: string } }) => this.onMessage(event as SlackMessageEvent, body.team_id);
    app.event('message', onMessage);
    app.event('app_mention', onMessage);
    const onReaction = async ({ event }: { event: unknown }) => this.onReaction(event as SlackReactionEvent);
    app.event('reaction_added', onReaction);
    app.event('reaction_removed', onReaction);

    app.command(this.settings.command, async ({ command, ack, respond }) => {
      await ack();
      const result = await handleSlashCommand(this.commands, command).catch((err: unknown) => {
        this.log.error({ err: (err as Error).message }, 'slash command failed');
        return { text: `That did not work (${(err as Error).message}); nothing was changed.` };
      });
      await respond({ response_type: 'ephemeral', text: result.text }).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'could not answer a slash command'));
    });

    app.shortcut({ type: 'message_action', callback_id: RECAP_SHORTCUT }, async ({ shortcut, ack, respond }) => {
      await ack();
      if (shortcut.type !== 'message_action') return;
      const channel = shortcut.channel.id;
      const threadTs = (shortcut.message as { thread_ts?: string }).thread_ts ?? shortcut.message.ts;
      const result = await runRecap(this.commands, channel, threadTs);
      await respond({ response_type: 'ephemeral', text: result.text }).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'could not answer a shortcut'));
    });

    app.error(async (err) => {
      this.log.error({ err: err.message, code: err.code }, 'slack app error');
    });
  }

  private onMessage(e: SlackMessageEvent, teamId: string | undefined): void {
    if (!e?.channel || !e.ts) return;
    const conversation = conversationOf(e);
    const outlet = slackOutlet(conversation, this.poster, this.identities);
    // Normalising waits on users.info; a per-conversation chain keeps the engine's order.
    const previous = this.handoff.get(conversation.id) ?? Promise.resolve();
    const next = previous.then(async () => {
      const event = await toChatEvent(e, this.inbound, teamId);
      if (event) this.track(this.runtime.engine.receive(event, outlet), conversation.id);
    });
    const settled = next.catch((err: unknown) => this.log.error({ conversation: conversation.id, err: (err as Error).message }, 'slack message could not be handled'));
    this.handoff.set(conversation.id, settled);
    this.track(settled, conversation.id);
    void settled.then(() => {
      if (this.handoff.get(conversation.id) === settled) this.handoff.delete(conversation.id);
    });
  }

  /** Reactions are not rounds: handled as they come, tracked so shutdown and tests can wait for them. */
  private onReaction(e: SlackReactionEvent): void {
    const deps = { store: this.runtime.store, identities: this.identities, directory: this.inbound.directory };
    const done = handleReaction(deps, e).then(
      (changed) => {
        if (changed) this.log.debug({ channel: e.item?.channel, emoji: e.reaction }, e.type === 'reaction_added' ? 'reaction stored as feedback' : 'reaction withdrawn: feedback deleted');
      },
      (err: unknown) => this.log.error({ channel: e.item?.channel, err: (err as Error).message }, 'slack reaction could not be handled'),
    );
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  private track(work: Promise<unknown>, conversation: string): void {
    const done = work.catch((err: unknown) => {
      if ((err as Error)?.name === 'AbortError' || /barge-in|shutdown/.test((err as Error)?.message ?? '')) this.log.debug({ conversation }, 'round cancelled');
      else this.log.error({ conversation, err: (err as Error).message }, 'slack round failed');
    });
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  /** Settles when every message received so far has been handled (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** A plain message from the app itself in a channel (moderator alerts). */
  async postNotice(channel: string, text: string): Promise<void> {
    await this.poster.post({ channel, message: turnMessage(text, false), identity: this.identities.app });
  }

  async stop(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    if (app) await app.stop().catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'slack receiver did not stop cleanly'));
    this.server = undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
    clearTimeout(timer);
    await this.pacer.stop();
  }
}
