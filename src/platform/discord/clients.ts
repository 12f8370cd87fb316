// The discord.js clients: the director (the only listener: guild messages with content, reactions,
// slash commands) and one per persona bot with minimal intents (Guilds, and DirectMessages for
// 1:1 conversations). Every client sends REST, and so its gateway lookup, to the configured base URL.
import { ActivityType, Client, GatewayIntentBits, Partials, type ClientOptions } from 'discord.js';
import type { Persona } from '../../persona/schema.ts';

export type ClientRole = 'director' | 'persona';

export function createClient(role: ClientRole, apiBaseUrl: string | undefined, personas: readonly Persona[] = []): Client {
  const intents =
    role === 'director'
      ? [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.GuildMessageReactions]
      : [GatewayIntentBits.Guilds, GatewayIntentBits.DirectMessages];
  const options: ClientOptions = {
    intents,
    // Partials: DMs arrive on channels the client has not cached, and reactions can be on
    // messages from before a restart.
    partials: role === 'director' ? [Partials.Message, Partials.Reaction, Partials.User, Partials.Channel] : [Partials.Channel],
    // Never let a stray @everyone or reply ping through, whatever a call site passes.
    allowedMentions: { parse: [], repliedUser: false },
    ...(apiBaseUrl ? { rest: { api: apiBaseUrl } } : {}),
  };
  // A persona bot shows its role as its status line.
  if (personas.length === 1) options.presence = { activities: [{ name: 'Custom Status', state: personas[0]!.role, type: ActivityType.Custom }] };
  return new Client(options);
}

/** Log in and wait until ready; the error names who the token belongs to and where it came from. */
export async function loginClient(client: Client, token: string, who: string, readyTimeoutMs = 60_000): Promise<void> {
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${who}: no READY from the Discord gateway within ${readyTimeoutMs / 1000} s`)), readyTimeoutMs);
    client.once('clientReady', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  try {
    await client.login(token);
    await ready;
  } catch (err) {
    ready.catch(() => {});
    const message = (err as Error).message;
    const rejected = /token|401|unauthori[sz]ed|authentication failed/i.test(message);
    throw new Error(`${who}: ${rejected ? 'Discord rejected the token' : 'could not connect to Discord'} (${message})`);
  }
}
