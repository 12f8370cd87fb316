// Discord settings from the environment, and which identity each persona posts with: its own
// bot (token from the variable its persona file names) or, in webhook mode, a channel webhook.
// Problems are collected and reported together, each naming the variable or the persona.
import { parseModerators, type ModeratorList } from '../../moderation/mascot.ts';
import type { Pack, Persona } from '../../persona/schema.ts';

export interface DiscordSettings {
  directorToken: string;
  /** Base URL for every client's REST calls (and so the gateway lookup), e.g. a rate-limit proxy. */
  apiBaseUrl?: string;
  /** Personas without a token post through channel webhooks instead of failing start-up. */
  webhooks: boolean;
  /** Packs offered on Discord (their personas need identities). */
  packs: Pack[];
  moderators: ModeratorList;
  /** Register the slash commands in this server only (they appear at once), instead of globally. */
  commandGuildId?: string;
}

/** How a persona appears on Discord. */
export type PersonaIdentity = { kind: 'bot'; tokenEnv: string; token: string } | { kind: 'webhook' };

export class DiscordSetupError extends Error {
  constructor(readonly problems: string[]) {
    super(`Discord: ${problems.length === 1 ? problems[0] : `\n  ${problems.join('\n  ')}`}`);
    this.name = 'DiscordSetupError';
  }
}

const value = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v ? v : undefined;
};

/** Read DISCORD_* variables; `packs` are the loaded packs, `defaultPack` the one used when DISCORD_PACKS is unset. */
export function readDiscordSettings(env: NodeJS.ProcessEnv, packs: Map<string, Pack>, defaultPack: string): DiscordSettings {
  const problems: string[] = [];
  const directorToken = value(env, 'DISCORD_DIRECTOR_TOKEN');
  if (!directorToken) problems.push('DISCORD_DIRECTOR_TOKEN is not set (the token of the director application)');

  const apiBaseUrl = value(env, 'DISCORD_API_BASE_URL');
  if (apiBaseUrl && !/^https?:\/\/[^\s/]+/.test(apiBaseUrl)) problems.push(`DISCORD_API_BASE_URL: "${apiBaseUrl}" is not an http(s) URL (e.g. http://127.0.0.1:8080/api)`);

  const webhookText = (value(env, 'DISCORD_WEBHOOKS') ?? 'off').toLowerCase();
  const webhooks = ['on', 'true', '1', 'yes'].includes(webhookText);
  if (!webhooks && !['off', 'false', '0', 'no'].includes(webhookText)) problems.push(`DISCORD_WEBHOOKS: "${webhookText}" is not accepted (on or off)`);

  const packIds = (value(env, 'DISCORD_PACKS') ?? defaultPack).split(/[\s,]+/).filter(Boolean);
  const unknown = packIds.filter((id) => !packs.has(id));
  if (unknown.length > 0) problems.push(`DISCORD_PACKS: ${unknown.map((u) => `"${u}"`).join(', ')} not loaded (available: ${[...packs.keys()].join(', ')})`);
  else if (!packIds.includes(defaultPack))
    problems.push(`DISCORD_PACKS: must include "${defaultPack}" (MASCOT_PACK), the pack every channel uses until a moderator picks another`);

  const commandGuildId = value(env, 'DISCORD_COMMAND_GUILD_ID');
  if (commandGuildId && !/^\d{5,20}$/.test(commandGuildId)) problems.push(`DISCORD_COMMAND_GUILD_ID: "${commandGuildId}" is not a server id (digits)`);

  if (problems.length > 0) throw new DiscordSetupError(problems);
  return {
    directorToken: directorToken!,
    ...(apiBaseUrl ? { apiBaseUrl: apiBaseUrl.replace(/\/+$/, '') } : {}),
    webhooks,
    packs: packIds.map((id) => packs.get(id)!),
    moderators: parseModerators(value(env, 'DISCORD_MODERATOR_IDS')),
    ...(commandGuildId ? { commandGuildId } : {}),
  };
}

/** The identity of every persona of the offered packs; throws naming each persona that has none. */
export function resolveIdentities(settings: DiscordSettings, env: NodeJS.ProcessEnv): Map<Persona, PersonaIdentity> {
  const identities = new Map<Persona, PersonaIdentity>();
  const problems: string[] = [];
  for (const pack of settings.packs) {
    for (const persona of pack.personas) {
      const tokenEnv = persona.identity.discord?.tokenEnv;
      const token = tokenEnv ? value(env, tokenEnv) : undefined;
      if (tokenEnv && token) identities.set(persona, { kind: 'bot', tokenEnv, token });
      else if (settings.webhooks) identities.set(persona, { kind: 'webhook' });
      else
        problems.push(
          tokenEnv
            ? `persona "${persona.id}" (${pack.id} pack) has no token: set ${tokenEnv}, or set DISCORD_WEBHOOKS=on to post as it through channel webhooks`
            : `persona "${persona.id}" (${pack.id} pack) names no identity.discord.tokenEnv in ${pack.dir}/${persona.id}.yaml; add one, or set DISCORD_WEBHOOKS=on`,
        );
    }
  }
  if (problems.length > 0) throw new DiscordSetupError(problems);
  return identities;
}
