// Who posts for each persona. Two ways to give personas their own faces in Slack:
//  - apps: one Slack app per persona, each with its own bot token, name and icon;
//  - customize: the director app posts every turn, setting the persona's name and icon per
//    message (needs the chat:write.customize scope).
// In apps mode a persona without a token of its own falls back to the customize way.
import { webApi } from '@slack/bolt';
import type { Logger } from '../../log.ts';
import type { Persona } from '../../persona/schema.ts';
import { personaTokenEnv, type IdentityMode, type SlackSettings } from './settings.ts';

export type WebClient = webApi.WebClient;
export type MakeClient = (token: string) => WebClient;

/** A bot user as Slack's auth.test reports it. */
export interface BotAccount {
  client: WebClient;
  userId: string;
  botId: string;
  teamId: string;
  name: string;
}

/** A name and an icon per message (Slack takes an emoji or an image URL, not both). */
export type Look = { username?: string } & ({ icon_emoji?: string; icon_url?: never } | { icon_url?: string; icon_emoji?: never });

/** How to post as one persona. */
export interface SlackIdentity {
  client: WebClient;
  /** chat.postMessage arguments that give the persona its name and icon (customize mode only). */
  look: Look;
}

export class SlackIdentityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SlackIdentityError';
  }
}

/** Verify a bot token with auth.test; the error names the variable, never the token. */
async function account(client: WebClient, variable: string): Promise<BotAccount> {
  let res;
  try {
    res = await client.auth.test();
  } catch (err) {
    throw new SlackIdentityError(`${variable}: Slack rejected the token (${(err as { data?: { error?: string } }).data?.error ?? (err as Error).message})`);
  }
  if (!res.user_id || !res.bot_id || !res.team_id) throw new SlackIdentityError(`${variable}: not a bot token (auth.test returned no bot user)`);
  return { client, userId: res.user_id, botId: res.bot_id, teamId: res.team_id, name: res.user ?? res.user_id };
}

export class SlackIdentities {
  private constructor(
    readonly mode: IdentityMode,
    readonly director: BotAccount,
    private readonly apps: ReadonlyMap<string, BotAccount>,
  ) {}

  /** Check every token with Slack and decide the identity mode. */
  static async connect(settings: SlackSettings, personas: readonly Persona[], makeClient: MakeClient, log: Logger): Promise<SlackIdentities> {
    const director = await account(makeClient(settings.botToken), 'SLACK_BOT_TOKEN');
    const mode: IdentityMode = settings.identity === 'auto' ? (settings.personaTokens.size > 0 ? 'apps' : 'customize') : settings.identity;
    const apps = new Map<string, BotAccount>();
    if (mode === 'apps') {
      const byId = new Map(personas.map((p) => [p.id, p]));
      await Promise.all(
        [...settings.personaTokens].map(async ([personaId, token]) => {
          const variable = personaTokenEnv(byId.get(personaId)!);
          const app = await account(makeClient(token), variable);
          if (app.teamId !== director.teamId)
            throw new SlackIdentityError(`${variable}: the app is installed in workspace ${app.teamId}, the director app in ${director.teamId}`);
          if (app.botId === director.botId) throw new SlackIdentityError(`${variable}: is the director app's own token; each persona needs its own app`);
          apps.set(personaId, app);
        }),
      );
      const without = personas.filter((p) => !apps.has(p.id)).map((p) => p.id);
      if (without.length > 0) log.warn({ personas: without }, 'these personas have no Slack app of their own; the director app posts for them with their name and icon');
    }
    log.info({ mode, director: director.name, team: director.teamId, personaApps: [...apps.keys()] }, 'slack identities ready');
    return new SlackIdentities(mode, director, apps);
  }

  of(persona: Persona): SlackIdentity {
    const app = this.apps.get(persona.id);
    if (app) return { client: app.client, look: {} };
    const icon = persona.identity.slack?.iconEmoji;
    return {
      client: this.director.client,
      look: { username: persona.displayName, ...(icon ? { icon_emoji: icon } : persona.avatarUrl ? { icon_url: persona.avatarUrl } : {}) },
    };
  }

  /** The director app as itself (notices, and a recap when no pack has a scribe). */
  get app(): SlackIdentity {
    return { client: this.director.client, look: {} };
  }

  /** The persona a bot message came from, when it is one of our persona apps. */
  personaOfBot(botId: string | undefined): string | undefined {
    if (!botId) return undefined;
    for (const [personaId, app] of this.apps) if (app.botId === botId) return personaId;
    return undefined;
  }

  /** The persona whose app has this bot user id (a mention such as <@U123>). */
  personaOfUser(userId: string): string | undefined {
    for (const [personaId, app] of this.apps) if (app.userId === userId) return personaId;
    return undefined;
  }

  /** True for the director app and every persona app: messages from them are ours. */
  isOurs(botId: string | undefined, userId: string | undefined): boolean {
    if (botId && (botId === this.director.botId || this.personaOfBot(botId))) return true;
    return userId !== undefined && (userId === this.director.userId || this.personaOfUser(userId) !== undefined);
  }

  /** One line for `/mascot personas`: how this persona appears in Slack. */
  describe(persona: Persona): string {
    const app = this.apps.get(persona.id);
    return app ? `its own Slack app <@${app.userId}>` : `the <@${this.director.userId}> app, posting as ${persona.displayName}`;
  }
}
